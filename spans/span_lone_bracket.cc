#include "spans/span_lone_bracket.h"

#include <algorithm>
#include <cstring>
#include <tuple>

namespace rpt::spans {
namespace {

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// Quotation marks a word may stand between: ASCII and the typographic ones.
constexpr std::string_view kQuotes[] = {"'",      "\"",     "`",      "\u201C", "\u201D",
                                        "\u201E", "\u2018", "\u2019", "\u201A", "\u00AB",
                                        "\u00BB", "\u2039", "\u203A"};

// A bracket's kind: 0-2 for ( [ {, 3-5 for their escaped forms (kEscaped added); kNone for none.
constexpr std::size_t kNone = 6;
constexpr std::size_t kEscaped = 3;
std::size_t bracket_kind(std::string_view brackets, char c) {
  const std::size_t at = brackets.find(c);
  return at == std::string_view::npos ? kNone : at;
}

// The offsets of the brackets outside `covered` that nothing pairs, in text order.
std::vector<std::size_t> lone_brackets(std::string_view text, const std::vector<bool>& covered) {
  struct Open {
    std::size_t kind;
    std::size_t at;
  };
  std::vector<Open> open;
  std::size_t open_of_kind[2 * kEscaped] =
      {};  // a closing bracket with none open is lone at once: linear
  std::vector<std::size_t> lone;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (covered[i]) continue;
    const bool escaped = i > 0 && text[i - 1] == '\\' && !covered[i - 1];
    if (std::size_t kind = bracket_kind("([{", text[i]); kind != kNone) {
      kind += escaped ? kEscaped : 0;
      open.push_back({kind, i});
      ++open_of_kind[kind];
    } else if (kind = bracket_kind(")]}", text[i]); kind != kNone) {
      kind += escaped ? kEscaped : 0;
      if (open_of_kind[kind] == 0) {
        // An interval's other bracket: "[0, 1)", "(0, 1]".
        const std::size_t other = kind == 0 ? 1 : kind == 1 ? 0 : kNone;
        if (!open.empty() && open.back().kind == other) {
          --open_of_kind[other];
          open.pop_back();
        } else {
          lone.push_back(i);
        }
        continue;
      }
      // Those opened after the partner close with it, unpaired.
      while (open.back().kind != kind) {
        lone.push_back(open.back().at);
        --open_of_kind[open.back().kind];
        open.pop_back();
      }
      --open_of_kind[kind];
      open.pop_back();
    }
  }
  for (const Open& o : open) lone.push_back(o.at);
  std::sort(lone.begin(), lone.end());
  return lone;
}

// text[begin, end) less the quotation marks at either end.
std::pair<std::size_t, std::size_t> without_quotes(std::string_view text, std::size_t begin,
                                                   std::size_t end) {
  for (bool trimmed = true; trimmed && begin < end;) {
    trimmed = false;
    for (std::string_view quote : kQuotes) {
      const std::string_view word = text.substr(begin, end - begin);
      if (word.size() > quote.size() && word.starts_with(quote)) {
        begin += quote.size();
        trimmed = true;
      } else if (word.size() > quote.size() && word.ends_with(quote)) {
        end -= quote.size();
        trimmed = true;
      }
    }
  }
  return {begin, end};
}

// text[begin, end) less the prose's punctuation after it and the quotation marks around it. A
// . : ! ? right after an opening bracket or a backslash is the syntax's: "[.", "[:", "\.".
std::pair<std::size_t, std::size_t> without_punctuation(std::string_view text, std::size_t begin,
                                                        std::size_t end) {
  while (end - begin > 1 && std::strchr(",;", text[end - 1]) != nullptr) --end;
  while (end - begin > 1 && std::strchr(".:!?", text[end - 1]) != nullptr &&
         std::strchr("([{\\", text[end - 2]) == nullptr) {
    --end;
  }
  return without_quotes(text, begin, end);
}

// Whether `word` reads as syntax, not prose: ASCII, no two letters in a row, and no opening
// bracket right before a letter ("(a third per turn," is a clause cut from its sentence).
bool is_syntax(std::string_view word) {
  for (std::size_t i = 0; i < word.size(); ++i) {
    if (static_cast<unsigned char>(word[i]) >= 0x80) return false;
    if (i > 0 && is_letter(word[i]) &&
        (is_letter(word[i - 1]) || std::strchr("([{", word[i - 1]) != nullptr)) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::vector<std::pair<std::size_t, std::size_t>> find_lone_bracket_words(
    std::string_view text, const std::vector<bool>& covered) {
  std::vector<std::pair<std::size_t, std::size_t>> words;
  if (text.find_first_of("()[]{}") == std::string_view::npos) return words;
  std::size_t read_to = 0;  // each word is read once: linear
  for (const std::size_t bracket : lone_brackets(text, covered)) {
    if (bracket < read_to) continue;
    std::size_t begin = bracket;
    while (begin > 0 && !is_blank(text[begin - 1])) --begin;
    std::size_t end = bracket + 1;
    while (end < text.size() && !is_blank(text[end])) ++end;
    read_to = end;
    std::tie(begin, end) = without_punctuation(text, begin, end);
    if (bracket < begin || bracket >= end || end - begin > kMaxLoneBracketWordBytes) continue;
    if (std::any_of(covered.begin() + static_cast<long>(begin),
                    covered.begin() + static_cast<long>(end), [](bool c) { return c; })) {
      continue;
    }
    if (is_syntax(text.substr(begin, end - begin))) words.emplace_back(begin, end);
  }
  return words;
}

}  // namespace rpt::spans
