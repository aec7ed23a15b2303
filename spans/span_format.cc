// The format-string recognizers of spans/span_format.h: everything that starts with '%'
// (printf, GCC diagnostics, strftime, Qt/KDE positional arguments) and with '{' (format fields,
// ICU messages).
#include <unicode/uchar.h>
#include <unicode/utf8.h>

#include <array>
#include <cstdint>
#include <string_view>

#include "spans/span_format.h"

namespace rpt::spans {
namespace {

constexpr std::size_t kMaxMappingKey = 64;    // %(name)s
constexpr std::size_t kMaxFormatSpec = 40;    // {0:yyyy-MM-dd}
constexpr std::size_t kMaxPriMacro = 16;      // %<PRIuMAX>
constexpr std::size_t kMaxGccQuote = 120;     // %<...%>: longer is prose, not quoted code
constexpr std::size_t kMaxDoubleBrace = 64;   // {{ user.profile.display_name | capitalize }}
constexpr std::size_t kMaxTemplateTag = 200;  // {{< figure src="a.png" title="..." >}}

bool is_space(char c) { return c == ' ' || c == '\t'; }

std::size_t skip_digits(std::string_view text, std::size_t i) {
  while (i < text.size() && is_digit(text[i])) ++i;
  return i;
}

// A Qt/KDE positional argument at text[at] == '%': %1..%99 (not followed by a third digit),
// Qt's localized %L1, KDE's plural %n. Returns its length or 0.
std::size_t positional_length(std::string_view text, std::size_t at) {
  std::size_t i = at + 1;
  if (at_or_nul(text, i) == 'n') return 2;
  if (at_or_nul(text, i) == 'L') ++i;
  if (at_or_nul(text, i) < '1' || at_or_nul(text, i) > '9') return 0;
  const std::size_t end = skip_digits(text, i);
  return end - i <= 2 ? end - at : 0;
}

struct PrintfSpec {
  std::size_t length = 0;  // 0: not a conversion
  // Only a width between '%' and the conversion letter (%2d, %1x): in a Qt string, or with the
  // pointless width 1, that is a positional argument followed by a letter.
  bool width_only = false;
  bool width_is_one = false;
};

// Length modifiers, longest first; the conversion letter must follow for them to count.
constexpr std::array<std::string_view, 13> kLengthModifiers = {
    "hh", "ll", "I64", "I32", "h", "l", "L", "q", "j", "z", "Z", "t", "w"};

// printf with the GNU and GCC-diagnostic extensions, Python's %(name)s and Apple's %@, at
// text[at] == '%':
//   %[(key) | N$][flags -+#0'][width | * | *N$][.precision][length][conversion letter | <PRIxNN>
//   | @ | #@name@]
// Any ASCII letter converts: GCC (%qD %L %C %wu), strftime (%Y %H) and glibc (%m) use most of
// them. The space flag is left out on purpose: "50% done" is prose.
PrintfSpec parse_printf(std::string_view text, std::size_t at) {
  PrintfSpec spec;
  std::size_t i = at + 1;
  bool plain = true;  // nothing but an optional width so far
  if (at_or_nul(text, i) == '(') {
    std::size_t close = i + 1;
    while (close < text.size() && close - i <= kMaxMappingKey &&
           (is_ident(text[close]) || text[close] == '.' || text[close] == '-')) {
      ++close;
    }
    if (close == i + 1 || at_or_nul(text, close) != ')') return spec;
    i = close + 1;
    plain = false;
  } else if (const std::size_t digits = skip_digits(text, i);
             digits > i && at_or_nul(text, digits) == '$') {
    i = digits + 1;
    plain = false;
  }
  bool grouping = false;   // the ' flag, only meaningful for numbers
  bool alternate = false;  // the # flag
  while (i < text.size() && std::string_view("-+#0'").find(text[i]) != std::string_view::npos) {
    grouping = grouping || text[i] == '\'';
    alternate = alternate || text[i] == '#';
    plain = false;
    ++i;
  }
  const std::size_t width_begin = i;
  if (at_or_nul(text, i) == '*') {
    ++i;
    plain = false;
    if (const std::size_t d = skip_digits(text, i); d > i && at_or_nul(text, d) == '$') i = d + 1;
  } else {
    i = skip_digits(text, i);
  }
  const std::string_view width = text.substr(width_begin, i - width_begin);
  if (at_or_nul(text, i) == '.') {
    plain = false;
    ++i;
    if (at_or_nul(text, i) == '*') {
      ++i;
    } else {
      i = skip_digits(text, i);
    }
  }
  // %<PRId64>: C's inttypes.h macros, as gettext keeps them.
  if (text.substr(i).starts_with("<PRI")) {
    std::size_t close = i + 4;
    while (close < text.size() && close - i < kMaxPriMacro && is_ident(text[close])) ++close;
    if (at_or_nul(text, close) != '>') return spec;
    spec.length = close + 1 - at;
    return spec;
  }
  for (const std::string_view modifier : kLengthModifiers) {
    if (!text.substr(i).starts_with(modifier)) continue;
    std::size_t after = i + modifier.size();
    if (modifier == "q") {  // GCC: %q+D %q#T
      while (at_or_nul(text, after) == '+' || at_or_nul(text, after) == '#') ++after;
    }
    if (is_alpha(at_or_nul(text, after))) {
      i = after;
      plain = false;
      break;
    }
  }
  const char conversion = at_or_nul(text, i);
  if (conversion == '@') {  // Objective-C and Swift (Apple's String(format:)): %@ %1$@
    spec.length = i + 1 - at;
    // A .stringsdict variable: %#@files@ is replaced by the plural rule "files" picks.
    std::size_t name_end = i + 1;
    while (name_end < text.size() && name_end - i <= kMaxMappingKey && is_ident(text[name_end])) {
      ++name_end;
    }
    if (alternate && name_end > i + 1 && at_or_nul(text, name_end) == '@') {
      spec.length = name_end + 1 - at;
    }
    return spec;
  }
  if (!is_alpha(conversion)) return spec;
  if (grouping && std::string_view("diufFgG").find(conversion) == std::string_view::npos) {
    return spec;  // GCC's %' (a typographic apostrophe) followed by a letter: "don%'t"
  }
  spec.length = i + 1 - at;
  spec.width_only = plain && !width.empty();
  spec.width_is_one = width == "1";
  return spec;
}

// %NAME or %NAME% (LibreOffice, Windows): an upper-case name of three characters or more.
std::size_t percent_variable_length(std::string_view text, std::size_t at) {
  std::size_t i = at + 1;
  if (!is_upper(at_or_nul(text, i))) return 0;
  int letters = 0;
  for (; i < text.size() && (is_upper(text[i]) || is_digit(text[i]) || text[i] == '_'); ++i) {
    letters += is_upper(text[i]) ? 1 : 0;
  }
  if (i - at < 4) return 0;
  // %NAME% closes with a percent sign; a one-letter code with digits (irssi's %C26) does not
  // take the next span's percent sign: "%C26%C" is %C26 then %C.
  if (at_or_nul(text, i) == '%' && letters >= 2) ++i;
  return i - at;
}

bool is_identifier_at(std::string_view text, std::size_t begin, std::size_t end) {
  if (begin >= end || is_digit(text[begin])) return false;
  for (std::size_t i = begin; i < end; ++i) {
    if (!is_ident(text[i])) return false;
  }
  return true;
}

// The argument of an ICU message or a format field: a number or an identifier. Returns its end.
std::size_t skip_argument(std::string_view text, std::size_t i) {
  while (i < text.size() && is_ident(text[i])) ++i;
  return i;
}

std::size_t skip_spaces(std::string_view text, std::size_t i) {
  while (i < text.size() && is_space(text[i])) ++i;
  return i;
}

constexpr std::array<std::string_view, 10> kIcuTypes = {
    "plural", "select",   "selectordinal", "number",   "date",
    "time",   "spellout", "ordinal",       "duration", "choice"};

// {arg, type ...}: an ICU MessageFormat argument with a type, whole to its matching brace.
std::size_t icu_message_length(const TextFacts& facts, std::size_t at) {
  const std::string_view text = facts.text;
  const std::size_t arg_begin = skip_spaces(text, at + 1);
  const std::size_t arg_end = skip_argument(text, arg_begin);
  if (arg_end == arg_begin) return 0;
  std::size_t i = skip_spaces(text, arg_end);
  if (at_or_nul(text, i) != ',') return 0;
  const std::size_t type_begin = skip_spaces(text, i + 1);
  std::size_t type_end = type_begin;
  while (type_end < text.size() && is_alpha(text[type_end])) ++type_end;
  const std::string_view type = text.substr(type_begin, type_end - type_begin);
  bool known = false;
  for (const std::string_view t : kIcuTypes) known = known || t == type;
  if (!known) return 0;
  i = skip_spaces(text, type_end);
  if (at_or_nul(text, i) != ',' && at_or_nul(text, i) != '}') return 0;
  const std::size_t close = facts.closing_brace[at];
  return close == TextFacts::kNoBrace ? 0 : close + 1 - at;
}

// {} {0} {name} {user.name} {items[0]} {0,-10} {0:N2} {name!r:>8}: .NET, Python, ICU fields.
std::size_t format_field_length(std::string_view text, std::size_t at) {
  std::size_t i = at + 1;
  const std::size_t name_begin = i;
  i = skip_argument(text, i);
  const bool numeric = i > name_begin && is_digit(text[name_begin]);
  if (i > name_begin && !numeric && !is_identifier_at(text, name_begin, i)) return 0;
  if (numeric && skip_digits(text, name_begin) != i) return 0;
  while (!numeric && i > name_begin) {  // attribute and index access
    if (at_or_nul(text, i) == '.' && is_alpha(at_or_nul(text, i + 1))) {
      i = skip_argument(text, i + 1);
    } else if (at_or_nul(text, i) == '[' && is_digit(at_or_nul(text, i + 1)) &&
               at_or_nul(text, skip_digits(text, i + 1)) == ']') {
      i = skip_digits(text, i + 1) + 1;
    } else {
      break;
    }
  }
  if (at_or_nul(text, i) == ',' && i > name_begin) {  // .NET alignment {0,-10}
    std::size_t d = i + 1 + (at_or_nul(text, i + 1) == '-' ? 1 : 0);
    const std::size_t end = skip_digits(text, d);
    if (end == d) return 0;
    i = end;
  }
  if (at_or_nul(text, i) == '!') {  // Python conversion {name!r}
    if (std::string_view("rsa").find(at_or_nul(text, i + 1)) == std::string_view::npos) return 0;
    i += 2;
  }
  if (at_or_nul(text, i) == ':') {
    const std::size_t spec_begin = ++i;
    while (i < text.size() && i - spec_begin <= kMaxFormatSpec && text[i] != '}' &&
           text[i] != '{' && text[i] != '\n') {
      ++i;
    }
    if (i == spec_begin) return 0;
  }
  return at_or_nul(text, i) == '}' ? i + 1 - at : 0;
}

}  // namespace

TextFacts::TextFacts(std::string_view t) : text(t) {
  std::vector<std::size_t> open;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '%' && i + 1 < text.size()) {
      if (text[i + 1] == '%') {
        ++i;
      } else if (text[i + 1] == '<' && first_gcc_open == kNoBrace) {
        first_gcc_open = i;
      } else if (text[i + 1] == '>') {
        last_gcc_close = i;
      } else if (!qt_positional && positional_length(text, i) > 0 && text[i + 1] != 'n' &&
                 parse_printf(text, i).length == 0) {
        qt_positional = true;
      }
    } else if (c == '{') {
      if (closing_brace.empty()) closing_brace.assign(text.size(), kNoBrace);
      open.push_back(i);
    } else if (c == '}' && !open.empty()) {
      closing_brace[open.back()] = i;
      open.pop_back();
    }
  }
}

Match match_percent(const TextFacts& facts, std::size_t at) {
  const std::string_view text = facts.text;
  if (at_or_nul(text, at + 1) == '%') return {2, SpanKind::kPercent};
  const PrintfSpec printf_spec = parse_printf(text, at);
  const std::size_t positional = positional_length(text, at);
  if (printf_spec.length == 2 && text[at + 1] == 'n') return {2, SpanKind::kPositional};
  if (printf_spec.length > 0 && positional > 0 && printf_spec.width_only &&
      (printf_spec.width_is_one || facts.qt_positional)) {
    return {positional, SpanKind::kPositional};
  }
  Match best{printf_spec.length, SpanKind::kPrintf};
  if (positional > best.length) best = {positional, SpanKind::kPositional};
  if (const std::size_t v = percent_variable_length(text, at); v > best.length) {
    best = {v, SpanKind::kVariable};
  }
  if (best.length > 0 || at + 1 >= text.size()) return best;
  const char next = text[at + 1];
  if (next == '{') {  // %{name}: KDE and LibreOffice named arguments
    std::size_t i = at + 2;
    while (i < text.size() && is_ident(text[i])) ++i;
    if (i > at + 2 && at_or_nul(text, i) == '}') return {i + 1 - at, SpanKind::kVariable};
  }
  // GCC diagnostics quote code between %< and %> (%<typename%>, %<-std=c++11%>): translators
  // keep it whole, so it is one span, quotes and code together.
  if (next == '<') {
    const std::size_t close = text.find("%>", at + 2);
    if (close != std::string_view::npos && close - at <= kMaxGccQuote) {
      return {close + 2 - at, SpanKind::kPrintf};
    }
  }
  // Otherwise: %< %> quotes (as a pair), %' apostrophe, %{ %} a URL.
  const bool quote =
      (next == '<' && facts.last_gcc_close != TextFacts::kNoBrace && facts.last_gcc_close > at) ||
      (next == '>' && facts.first_gcc_open < at);
  if (quote || next == '\'' || next == '{' || next == '}') return {2, SpanKind::kPrintf};
  return best;
}

namespace {

// {{count}} {{ user.name }} {{name|upper}}: i18next, Mustache, Jinja and Angular interpolation,
// whole (Python's "{{name}}", an escaped "{name}", is as verbatim); 0 when not one.
std::size_t double_brace_length(std::string_view text, std::size_t at) {
  if (at_or_nul(text, at + 1) != '{') return 0;
  bool named = false;
  for (std::size_t i = at + 2; i < text.size() && i - at <= kMaxDoubleBrace; ++i) {
    const char c = text[i];
    if (c == '}') return named && at_or_nul(text, i + 1) == '}' ? i + 2 - at : 0;
    if (!is_ident(c) && std::string_view(" .,-|:").find(c) == std::string_view::npos) return 0;
    named = named || is_ident(c);
  }
  return 0;
}

}  // namespace

std::size_t template_tag_length(std::string_view text, std::size_t at) {
  std::string_view close;
  if (text.substr(at, 3) == "{{<") {
    close = ">}}";
  } else if (text.substr(at, 3) == "{{%") {
    close = "%}}";
  } else if (text.substr(at, 2) == "{%") {
    close = "%}";
  } else if (text.substr(at, 2) == "{#") {
    close = "#}";
  } else {
    return 0;
  }
  const std::string_view rest = text.substr(at, kMaxTemplateTag);
  const std::size_t end = rest.find(close, close.size());
  if (end == std::string_view::npos || rest.substr(0, end).find('\n') != std::string_view::npos) {
    return 0;
  }
  // Something inside: "{%}" and "{##}" are no tags.
  const std::string_view inside = rest.substr(close.size(), end - close.size());
  if (inside.find_first_not_of(' ') == std::string_view::npos) return 0;
  return end + close.size();
}

Match match_brace(const TextFacts& facts, std::size_t at) {
  if (const std::size_t tag = template_tag_length(facts.text, at); tag > 0) {
    return {tag, SpanKind::kBrace};
  }
  if (const std::size_t interpolation = double_brace_length(facts.text, at); interpolation > 0) {
    return {interpolation, SpanKind::kBrace};
  }
  if (const std::size_t icu = icu_message_length(facts, at); icu > 0) {
    return {icu, SpanKind::kIcuMessage};
  }
  return {format_field_length(facts.text, at), SpanKind::kBrace};
}

namespace {

// A letter or digit outside ASCII (ICU) ends at `at`, or starts there (€ £ are neither).
bool letter_before(std::string_view text, std::size_t at) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(text.data());
  auto i = static_cast<int32_t>(at);
  UChar32 c = 0;
  U8_PREV(bytes, 0, i, c);
  return c >= 0x80 && u_isalnum(c);
}
bool letter_at(std::string_view text, std::size_t at) {
  if (at >= text.size()) return false;
  const auto* bytes = reinterpret_cast<const uint8_t*>(text.data());
  auto i = static_cast<int32_t>(at);
  UChar32 c = 0;
  U8_NEXT(bytes, i, static_cast<int32_t>(text.size()), c);
  return c >= 0x80 && u_isalnum(c);
}

}  // namespace

// Digits, and digits after each separator (. , : / -) that has them on both sides; a number of
// its own: no letter, digit, '_' or separator with a digit before it (mp3, x86_64, v1.2, the
// "2" of "1.2" seen again), no letter, digit or '_' after it (10th, 3D, 1.5kg). A lone digit is
// a word the model copies ("1 file", "Step 3"); two digits or a separator make a number it
// garbled ("2024-01-03" as "2024-024-01-01-01-0", "23:59:59" as "23:59:59:59", "2024" as "24").
Match match_number(std::string_view text, std::size_t at) {
  // After a letter, or a span opener (%02, $1, &#160, \\0: malformed spans are no numbers).
  if (at > 0 && (is_ident(text[at - 1]) ||
                 std::string_view("%$#&\\{").find(text[at - 1]) != std::string_view::npos ||
                 letter_before(text, at))) {
    return {};
  }
  if (at > 1 && std::string_view(".,:/-").find(text[at - 1]) != std::string_view::npos &&
      is_digit(text[at - 2])) {
    return {};
  }
  std::size_t end = at;
  while (is_digit(at_or_nul(text, end))) ++end;
  bool separated = false;
  while (std::string_view(".,:/-").find(at_or_nul(text, end)) != std::string_view::npos &&
         is_digit(at_or_nul(text, end + 1))) {
    separated = true;
    end += 1;
    while (is_digit(at_or_nul(text, end))) ++end;
  }
  if (is_ident(at_or_nul(text, end)) || letter_at(text, end)) return {};
  if (!separated && end - at < 2) return {};
  return {end - at, SpanKind::kNumber};
}

// An international phone number: '+', a country code, then groups of digits each after one
// space or hyphen (a group may be parenthesised: "+44 (0)20 7946 0958"), 7 to 15 digits in all,
// alone as a word. Seen as numbers apart, the demo models dropped a group and the search put it
// at the sentence's end ("+1 555 0100" came back as "+1 555 ... .0100").
Match match_phone(std::string_view text, std::size_t at) {
  constexpr int kFewestDigits = 7;
  constexpr int kMostDigits = 15;  // ITU-T E.164
  if (at > 0 && (is_ident(text[at - 1]) || letter_before(text, at))) return {};
  std::size_t end = at + 1;
  int digits = 0;
  int groups = 0;
  while (true) {
    const bool parenthesised = groups > 0 && at_or_nul(text, end) == '(';
    std::size_t i = end + (parenthesised ? 1 : 0);
    const std::size_t first = i;
    while (is_digit(at_or_nul(text, i))) ++i;
    if (i == first || (parenthesised && at_or_nul(text, i) != ')')) break;
    digits += static_cast<int>(i - first);
    ++groups;
    end = i + (parenthesised ? 1 : 0);
    const char next = at_or_nul(text, end);
    if (parenthesised && is_digit(next)) continue;  // "(0)20"
    if ((next != ' ' && next != '-') ||
        !(is_digit(at_or_nul(text, end + 1)) || at_or_nul(text, end + 1) == '(')) {
      break;
    }
    ++end;
  }
  if (groups < 3 || digits < kFewestDigits || digits > kMostDigits) return {};
  if (is_ident(at_or_nul(text, end)) || letter_at(text, end)) return {};
  return {end - at, SpanKind::kNumber};
}

Match match_number_sign(std::string_view text, std::size_t at) {
  // Apart: a blank, the text's edge or punctuation around words. Anything else joins it to a
  // word ("C#", "é#") or to another span ("#%d", "&#;", "#{name}").
  const auto apart = [](char c) {
    return c == '\0' || std::string_view(" \t\r\n.,;:!?()[]\"'").find(c) != std::string_view::npos;
  };
  if ((at > 0 && !apart(text[at - 1])) || !apart(at_or_nul(text, at + 1))) return {};
  return {1, SpanKind::kPluralNumber};
}

}  // namespace rpt::spans
