#include "documents/option_column.h"

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

}  // namespace

std::size_t option_column_length(std::string_view text, std::size_t begin, std::size_t end) {
  const std::string_view line = text.substr(begin, end - begin);
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
