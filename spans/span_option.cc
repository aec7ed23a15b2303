#include "spans/span_option.h"

#include <cstring>

#include "spans/span_format.h"

namespace rpt::spans {
namespace {

// Quotation marks, which open and close alike in one language or another (German closes with “
// and «): an option may stand right after one and right before one.
constexpr std::string_view kQuotes[] = {"\u201C", "\u201D", "\u201E", "\u2018", "\u2019",
                                        "\u201A", "\u00AB", "\u00BB", "\u2039", "\u203A"};
// An option's value may be this long at most: a longer run is prose glued to it.
constexpr std::size_t kMaxValueBytes = 200;

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Whether an option may start at text[at]: what stands before it opens a word.
bool opens_option(std::string_view text, std::size_t at) {
  if (at == 0) return true;
  const char before = text[at - 1];
  if (is_blank(before) || std::strchr("([{'\"`=,>/|*", before) != nullptr) return true;
  for (std::string_view quote : kQuotes) {
    if (text.substr(0, at).ends_with(quote)) return true;
  }
  return false;
}

// Whether a word ends at text[at]: the text's end, a blank, or punctuation that closes prose.
bool ends_word(std::string_view text, std::size_t at) {
  if (at == text.size() || is_blank(text[at])) return true;
  if (std::strchr(",;:!?)]'\"`</|*", text[at]) != nullptr) return true;
  if (text[at] == '.') return at + 1 == text.size() || is_blank(text[at + 1]);
  for (std::string_view quote : kQuotes) {
    if (text.substr(at).starts_with(quote)) return true;
  }
  return false;
}

// What an option's value is made of: printable ASCII but the characters that delimit it in prose
// and markup.
bool in_value(char c) { return c > ' ' && c < 0x7F && std::strchr("<>\"`\\", c) == nullptr; }

// The end of a long option's name starting at text[at] (after its "--"), or `at` when none.
std::size_t long_name_end(std::string_view text, std::size_t at) {
  if (at >= text.size() || !is_alpha(text[at])) return at;
  std::size_t end = at + 1;
  while (end < text.size() && (is_ident(text[end]) || text[end] == '-')) ++end;
  while (text[end - 1] == '-') --end;  // "--foo-" ends at "--foo"
  return end;
}

// The end of "=VALUE" or "[=VALUE]" at text[at], or `at` when there is none.
std::size_t value_end(std::string_view text, std::size_t at) {
  if (text.substr(at).starts_with("[=")) {
    const std::size_t close = text.find(']', at + 2);
    if (close == std::string_view::npos || close - at > kMaxValueBytes) return at;
    for (std::size_t i = at + 2; i < close; ++i) {
      if (!in_value(text[i])) return at;
    }
    return close > at + 2 ? close + 1 : at;
  }
  if (at >= text.size() || text[at] != '=') return at;
  // A quoted value, quotes and all: --color='auto', --format="%s".
  if (at + 1 < text.size() && (text[at + 1] == '\'' || text[at + 1] == '"')) {
    const std::size_t close = text.find(text[at + 1], at + 2);
    if (close == std::string_view::npos || close - at > kMaxValueBytes) return at;
    const std::string_view value = text.substr(at + 2, close - at - 2);
    if (value.empty() || value.find_first_of("\r\n") != std::string_view::npos) return at;
    return close + 1;
  }
  std::size_t end = at + 1;
  while (end < text.size() && end - at <= kMaxValueBytes && in_value(text[end])) ++end;
  while (end > at + 1 && std::strchr(".,;:!?)]'", text[end - 1]) != nullptr) --end;
  return end > at + 1 ? end : at;
}

// The end of the option at text[at] (a '-' that opens a word), or `at` when there is none.
std::size_t option_end(std::string_view text, std::size_t at) {
  if (text.substr(at).starts_with("--")) {
    const std::size_t name_end = long_name_end(text, at + 2);
    if (name_end == at + 2) return at;
    const std::size_t end = value_end(text, name_end);
    return ends_word(text, end) ? end : at;
  }
  const std::size_t end = at + 2;
  if (end > text.size() || !(is_alpha(text[at + 1]) || is_digit(text[at + 1]))) return at;
  return ends_word(text, end) ? end : at;
}

}  // namespace

std::vector<std::pair<std::size_t, std::size_t>> find_command_options(std::string_view text) {
  std::vector<std::pair<std::size_t, std::size_t>> options;
  for (std::size_t at = text.find('-'); at != std::string_view::npos; at = text.find('-', at)) {
    const std::size_t end = opens_option(text, at) ? option_end(text, at) : at;
    if (end > at) {
      options.emplace_back(at, end);
      at = end;
    } else {
      // Past this run of dashes: "---x" holds no option.
      while (at < text.size() && text[at] == '-') ++at;
    }
  }
  return options;
}

}  // namespace rpt::spans
