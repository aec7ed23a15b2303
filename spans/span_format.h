// The recognizers behind find_protected_spans (spans/protected_spans.h), one per family, each
// asked at one byte offset whether a span of its family starts there and how long it is. This
// header: what they share (ASCII classes, Match, TextFacts) and the format-string families
// (printf and relatives, brace fields, ICU messages); spans/span_markup.h the markup ones.
// Internal to spans/. Each reads forward no further than its syntax allows and stops at the next
// byte that could start another span of its family: scanning a text stays linear.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "spans/protected_spans.h"

namespace rpt::spans {

// ASCII classes: bytes of UTF-8 sequences (and invalid bytes) are in none of them.
inline bool is_digit(char c) { return c >= '0' && c <= '9'; }
inline bool is_lower(char c) { return c >= 'a' && c <= 'z'; }
inline bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
inline bool is_alpha(char c) { return is_lower(c) || is_upper(c); }
inline bool is_ident(char c) { return is_alpha(c) || is_digit(c) || c == '_'; }
// text[i], or '\0' past the end: lookahead without bounds checks at every step.
inline char at_or_nul(std::string_view text, std::size_t i) {
  return i < text.size() ? text[i] : '\0';
}

struct Match {
  std::size_t length = 0;  // 0: no span starts here
  SpanKind kind = SpanKind::kPrintf;
};

// What the recognizers of one text share, computed once per text.
struct TextFacts {
  explicit TextFacts(std::string_view text);

  std::string_view text;
  // The text uses Qt/KDE positional arguments (a %1..%99 that no printf conversion follows), so
  // "%1x" there is %1 followed by "x", not a hexadecimal conversion of width 1.
  bool qt_positional = false;
  // For each '{' the offset of its matching '}' (kNoBrace when unbalanced); empty when the text
  // has no '{'. One stack pass, so nested ICU messages cost nothing to delimit.
  std::vector<std::size_t> closing_brace;
  static constexpr std::size_t kNoBrace = static_cast<std::size_t>(-1);
  // GCC's quotes %< and %> count only as a pair: the first "%<" and the last "%>" (kNoBrace when
  // absent), so that "$n|%</span>" keeps its closing tag.
  std::size_t first_gcc_open = kNoBrace;
  std::size_t last_gcc_close = kNoBrace;
};

// text[at] == '%': printf / GCC diagnostics / strftime, %%, %1 %n, %NAME% %{name}.
Match match_percent(const TextFacts& facts, std::size_t at);
// text[at] == '{': {0} {} {name} {0:N2}, or a whole ICU message.
Match match_brace(const TextFacts& facts, std::size_t at);
// The length of a template's tag at text[at], whole, on one line (at most 200 bytes): Hugo's
// shortcodes {{< name args >}} {{% name %}} {{< /name >}}, Jinja's and Django's statements
// {% if user %} and comments {# note #}; 0 when not one. The demo models translated a
// shortcode's name and arguments.
std::size_t template_tag_length(std::string_view text, std::size_t at);
// A digit at text[at]: 2024, 10:30, 2024-01-03, 1.5, 1,234,567, 192.168.0.1, 12/31/2023.
Match match_number(std::string_view text, std::size_t at);
// text[at] == '+': an international phone number, "+1 555 0100", "+44 (0)20 7946 0958".
Match match_phone(std::string_view text, std::size_t at);

// text[at] == '#' standing alone (blanks, the text's edges or . , ; : ! ? ( ) [ ] " ' beside it):
// the number of an ICU plural case ("{n, plural, other {# files}}"), or a key's name ("Press
// #"). "C#", "#1", "#define", "#%d", "#{name}" are not spans.
Match match_number_sign(std::string_view text, std::size_t at);

}  // namespace rpt::spans
