#include "documents/bracket_pairs.h"

#include <unicode/uchar.h>

#include <array>
#include <optional>

#include "common/text_hygiene.h"

namespace rpt::documents {
namespace {

// The first bytes of every mark of kPairs: ( ) [ ] " and the UTF-8 lead bytes of the others
// (0xC2 « », 0xE2 “ ” „ ‘ ’ ‚ ‹ ›, 0xE3 【 】 〔 〕 「 」 『 』, 0xEF （ ） ［ ］): the scan jumps
// between them (a megabyte of text without a mark is one search).
constexpr std::string_view kFirstBytes = "()[]\"\xC2\xE2\xE3\xEF";

struct Pair {
  std::string_view opening;
  std::string_view closing;
};

constexpr std::string_view kStraightQuote = "\"";
constexpr std::string_view kApostrophe = "\u2019";  // ’, also the closing of ‘ ’

constexpr Pair kPairs[] = {{"(", ")"},
                           {"[", "]"},
                           {"\uFF08" /* （ */, "\uFF09" /* ） */},
                           {"\uFF3B" /* ［ */, "\uFF3D" /* ］ */},
                           {"\u3010" /* 【 */, "\u3011" /* 】 */},
                           {"\u3014" /* 〔 */, "\u3015" /* 〕 */},
                           {"\u201C" /* “ */, "\u201D" /* ” */},
                           {"\u201E" /* „ */, "\u201C" /* “ */},
                           {"\u201E" /* „ */, "\u201D" /* ” */},
                           {"\u2018" /* ‘ */, "\u2019" /* ’ */},
                           {"\u201A" /* ‚ */, "\u2018" /* ‘ */},
                           {"\u00AB" /* « */, "\u00BB" /* » */},
                           {"\u00BB" /* » */, "\u00AB" /* « */},
                           {"\u2039" /* ‹ */, "\u203A" /* › */},
                           {"\u300C" /* 「 */, "\u300D" /* 」 */},
                           {"\u300E" /* 『 */, "\u300F" /* 』 */},
                           {"\"", "\""}};

// The marks opened and not yet closed, innermost last. Linear in all: a closing mark looks down
// the stack only when its kind is open, and what it passes over is closed with it (a text of
// 500,000 '(' and then 500,000 ']' must not cost their product).
class OpenMarks {
 public:
  void push(std::size_t kind, std::size_t at) {
    stack_.push_back({kind, at});
    ++count_[kind];
  }
  // Where the innermost open mark of `kind` opened, closing it and every mark opened after it
  // (and the other kinds of its opening mark: „ opens „ “ and „ ”); nullopt when none is open.
  std::optional<std::size_t> close(std::size_t kind) {
    if (count_[kind] == 0) return std::nullopt;
    std::size_t match = stack_.size();
    while (stack_[match - 1].kind != kind) --match;
    const std::size_t opened_at = stack_[match - 1].at;
    while (stack_.size() >= match || (!stack_.empty() && stack_.back().at == opened_at)) {
      --count_[stack_.back().kind];
      stack_.pop_back();
    }
    return opened_at;
  }

 private:
  struct Open {
    std::size_t kind = 0;  // index in kPairs
    std::size_t at = 0;
  };
  std::vector<Open> stack_;
  std::array<std::size_t, std::size(kPairs)> count_{};
};

bool is_blank_at(std::string_view text, std::size_t at) {
  std::size_t i = at;
  char32_t c = 0;
  return at < text.size() && next_code_point(text, &i, &c) && is_blank_code_point(c);
}

bool is_blank_before(std::string_view text, std::size_t at) {
  char32_t c = 0;
  if (at == 0) return false;
  previous_code_point(text, at, &c);
  return is_blank_code_point(c);
}

bool is_letter_at(std::string_view text, std::size_t at) {
  std::size_t i = at;
  char32_t c = 0;
  return at < text.size() && next_code_point(text, &i, &c) &&
         u_isalpha(static_cast<UChar32>(c)) != 0;
}

// Whether kPairs[kind]'s closing mark at text[at, end) may close: a straight " after a
// non-blank; ’ not before a letter (an apostrophe).
bool may_close(std::string_view text, std::size_t kind, std::size_t at, std::size_t end) {
  const std::string_view closing = kPairs[kind].closing;
  if (closing == kStraightQuote) return at > 0 && !is_blank_before(text, at);
  return closing != kApostrophe || !is_letter_at(text, end);
}

// Whether kPairs[kind]'s opening mark at text[at, end) may open: a straight " before a non-blank,
// after the text's start, a blank or an opening bracket.
bool may_open(std::string_view text, std::size_t kind, std::size_t at, std::size_t end) {
  if (kPairs[kind].opening != kStraightQuote) return true;
  if (end >= text.size() || is_blank_at(text, end)) return false;
  return at == 0 || is_blank_before(text, at) || text[at - 1] == '(' || text[at - 1] == '[';
}

}  // namespace

std::vector<std::pair<std::size_t, std::size_t>> bracket_pairs(std::string_view text,
                                                               std::size_t max_bytes) {
  std::vector<std::pair<std::size_t, std::size_t>> pairs;
  OpenMarks open;
  for (std::size_t at = text.find_first_of(kFirstBytes); at < text.size();
       at = text.find_first_of(kFirstBytes, at)) {
    const std::string_view rest = text.substr(at);
    std::size_t length = 1;
    bool done = false;
    // A closing mark whose kind is open closes it (before any reading as an opening mark).
    for (std::size_t kind = 0; kind < std::size(kPairs) && !done; ++kind) {
      const std::string_view closing = kPairs[kind].closing;
      if (!rest.starts_with(closing) || !may_close(text, kind, at, at + closing.size())) continue;
      const std::optional<std::size_t> opened_at = open.close(kind);
      if (!opened_at) continue;  // never opened: maybe another kind's opening mark
      const std::size_t end = at + closing.size();
      if (end - *opened_at <= max_bytes) pairs.emplace_back(*opened_at, end);
      length = closing.size();
      done = true;
    }
    for (std::size_t kind = 0; kind < std::size(kPairs) && !done; ++kind) {
      const std::string_view opening = kPairs[kind].opening;
      if (!rest.starts_with(opening) || !may_open(text, kind, at, at + opening.size())) continue;
      // One opening mark of several kinds („ opens „ “ and „ ”): each kind open, one closes.
      for (std::size_t also = kind; also < std::size(kPairs); ++also) {
        if (kPairs[also].opening == opening) open.push(also, at);
      }
      length = opening.size();
      done = true;
    }
    at += length;
  }
  return pairs;
}

}  // namespace rpt::documents
