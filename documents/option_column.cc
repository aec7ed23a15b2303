#include "documents/option_column.h"

#include <algorithm>
#include <cctype>

namespace rpt::documents {
namespace {

bool is_gap_blank(char c) { return c == ' ' || c == '\t'; }

// "-d", "--directories=ACTION", "-NUM": a dash or two, then a letter or digit.
bool is_option(std::string_view word) {
  const std::size_t dashes = word.starts_with("--") ? 2 : word.starts_with('-') ? 1 : 0;
  return dashes > 0 && word.size() > dashes &&
         std::isalnum(static_cast<unsigned char>(word[dashes])) != 0;
}

// "%a", "%(A=B?T:E)": a format directive, ASCII and no blank; or, where `indented`, "F" or
// "GTYPE": a letter or an upper-case name.
bool is_syntax_term(std::string_view word, bool indented) {
  if (word.empty() || std::any_of(word.begin(), word.end(), [](char c) {
        return static_cast<unsigned char>(c) >= 0x80 || std::iscntrl(static_cast<unsigned char>(c));
      })) {
    return false;
  }
  if (word.size() >= 2 && word[0] == '%') return true;
  if (!indented) return false;
  if (word.size() == 1) return std::isalpha(static_cast<unsigned char>(word[0])) != 0;
  return std::all_of(word.begin(), word.end(), [](char c) {
    return std::isupper(static_cast<unsigned char>(c)) != 0 || c == '_';
  });
}

// The length of "TERM  description" at line's start, or 0.
std::size_t syntax_term_length(std::string_view line, bool indented) {
  std::size_t word_end = 0;
  while (word_end < line.size() && !is_gap_blank(line[word_end])) ++word_end;
  std::size_t blank_end = word_end;
  while (blank_end < line.size() && is_gap_blank(line[blank_end])) ++blank_end;
  if (blank_end - word_end < 2 || blank_end == line.size()) return 0;
  return is_syntax_term(line.substr(0, word_end), indented) ? blank_end : 0;
}

}  // namespace

std::size_t option_column_length(std::string_view text, std::size_t begin, std::size_t end) {
  const std::string_view line = text.substr(begin, end - begin);
  const bool indented = begin > 0 && is_gap_blank(text[begin - 1]);
  if (const std::size_t term = syntax_term_length(line, indented); term > 0) return term;
  std::size_t at = 0;
  bool argument_may_follow = false;
  for (bool first = true;; first = false) {
    std::size_t word_end = at;
    while (word_end < line.size() && !is_gap_blank(line[word_end])) ++word_end;
    const std::string_view word = line.substr(at, word_end - at);
    if (is_option(word)) {
      argument_may_follow = !word.ends_with(',');
    } else if (!first && argument_may_follow) {
      argument_may_follow = false;
    } else {
      return 0;
    }
    std::size_t blank_end = word_end;
    while (blank_end < line.size() && is_gap_blank(line[blank_end])) ++blank_end;
    if (blank_end == line.size() || blank_end - word_end >= 2) return blank_end;
    at = blank_end;
  }
}

}  // namespace rpt::documents
