// The recognizers of spans/span_markup.h for variables, markup tags, entities and escapes.
#include <algorithm>
#include <array>
#include <iterator>
#include <string_view>

#include "spans/span_markup.h"

namespace rpt::spans {
namespace {

constexpr std::size_t kMaxTag = 2048;       // <span foreground="red" font_desc="...">
constexpr std::size_t kMaxComment = 4096;   // <!-- a translator's or a generator's note -->
constexpr std::size_t kMaxEntityName = 32;  // &kappname;
constexpr std::size_t kMaxNumberedTag = 3;  // <0> .. <999>
constexpr std::size_t kMaxCode = 120;       // `git commit --amend --no-edit`, as GCC's %<...%>

char lower(char c) { return is_upper(c) ? static_cast<char>(c - 'A' + 'a') : c; }
bool is_hex(char c) { return is_digit(c) || (lower(c) >= 'a' && lower(c) <= 'f'); }
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Sorted, lower case. training/placeholders.py's MARKUP_TAGS plus DocBook/KDE and HTML names
// that are never used as metavariables. Matched in any case (<BR>, <I>), except kLowerCaseOnly.
constexpr std::string_view kKnownTags[] = {
    "a",          "abbr",       "application", "b",       "big",      "blockquote", "body",
    "bold",       "br",         "caption",     "center",  "cite",     "code",       "command",
    "dd",         "div",        "dl",          "dt",      "em",       "emphasis",   "envar",
    "filename",   "font",       "guibutton",   "guiicon", "guilabel", "guimenu",    "guimenuitem",
    "guisubmenu", "h1",         "h2",          "h3",      "h4",       "h5",         "h6",
    "head",       "hr",         "html",        "i",       "img",      "italic",     "kbd",
    "keycap",     "keycombo",   "li",          "link",    "literal",  "menuchoice", "nl",
    "nobr",       "ol",         "p",           "para",    "pre",      "qt",         "replaceable",
    "s",          "shortcut",   "small",       "span",    "strike",   "strong",     "sub",
    "sup",        "systemitem", "table",       "tbody",   "td",       "th",         "thead",
    "tr",         "tt",         "u",           "ul",      "ulink",    "userinput",  "varname",
    "xref"};

// DocBook and KDE names that, upper-cased, are metavariables: "<FILENAME>", "<COMMAND>".
constexpr std::string_view kLowerCaseOnly[] = {
    "application", "command",     "emphasis",   "envar",     "filename", "link",
    "literal",     "replaceable", "systemitem", "userinput", "varname"};

// Identifier characters of $(VAR) and ${VAR} (make, CMake, shell): also '.' and '-'.
bool is_braced_name_char(char c) { return is_ident(c) || c == '.' || c == '-'; }

}  // namespace

bool same_name(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

bool is_known_tag(std::string_view name) {
  if (!name.empty() && std::all_of(name.begin(), name.end(), is_digit)) return true;  // <0>
  if (name.size() > 16) return false;
  std::array<char, 16> buffer{};
  for (std::size_t i = 0; i < name.size(); ++i) buffer[i] = lower(name[i]);
  const std::string_view lowered(buffer.data(), name.size());
  if (!std::binary_search(std::begin(kKnownTags), std::end(kKnownTags), lowered)) return false;
  return lowered == name || std::find(std::begin(kLowerCaseOnly), std::end(kLowerCaseOnly),
                                      lowered) == std::end(kLowerCaseOnly);
}

// i18next's nesting, $t(key) or $t(key, {"count": 2}), up to this many bytes on one line.
constexpr std::size_t kMaxNesting = 160;

Match match_variable(std::string_view text, std::size_t at) {
  if (text.substr(at, 3) == "$t(") {
    int depth = 0;
    for (std::size_t i = at + 2; i < text.size() && i - at < kMaxNesting && text[i] != '\n'; ++i) {
      if (text[i] == '(') ++depth;
      if (text[i] == ')' && --depth == 0) {
        if (i == at + 3) break;  // "$t()": no key
        return {i + 1 - at, SpanKind::kVariable};
      }
    }
  }
  const char open = at_or_nul(text, at + 1);
  if (open == '(' || open == '{') {  // $(ARG1) ${name}
    const char close = open == '(' ? ')' : '}';
    std::size_t i = at + 2;
    while (i < text.size() && is_braced_name_char(text[i])) ++i;
    if (i == at + 2 || at_or_nul(text, i) != close) return {};
    return {i + 1 - at, SpanKind::kVariable};
  }
  // $OMP_NUM_THREADS $player_name and Wesnoth's $unit.name| (the '|' ends a variable there).
  if (!is_alpha(open) && open != '_') return {};
  std::size_t i = at + 1;
  while (i < text.size() && is_ident(text[i])) ++i;
  while (at_or_nul(text, i) == '.' && is_ident(at_or_nul(text, i + 1)) && !is_digit(text[i + 1])) {
    i += 1;
    while (i < text.size() && is_ident(text[i])) ++i;
  }
  // Wesnoth's "$name|" ends the name; LibreOffice writes "$filename$".
  const char after = at_or_nul(text, i + 1);
  const bool dollar_end =
      at_or_nul(text, i) == '$' && !is_ident(after) && after != '(' && after != '{';
  if (at_or_nul(text, i) == '|' || dollar_end) ++i;
  return {i - at, SpanKind::kVariable};
}

Match match_entity(std::string_view text, std::size_t at) {
  std::size_t i = at + 1;
  std::size_t max_digits = 0;
  bool (*digit)(char) = nullptr;
  if (at_or_nul(text, i) == '#') {
    ++i;
    const bool hex = at_or_nul(text, i) == 'x' || at_or_nul(text, i) == 'X';
    if (hex) ++i;
    digit = hex ? is_hex : is_digit;
    max_digits = hex ? 6 : 7;
  } else if (is_alpha(at_or_nul(text, i))) {
    digit = [](char c) { return is_ident(c) || c == '.' || c == '-'; };
    max_digits = kMaxEntityName;
  } else {
    return {};
  }
  const std::size_t begin = i;
  while (i < text.size() && i - begin < max_digits && digit(text[i])) ++i;
  if (i == begin || at_or_nul(text, i) != ';') return {};
  return {i + 1 - at, SpanKind::kEntity};
}

Match match_escape(std::string_view text, std::size_t at) {
  const char c = at_or_nul(text, at + 1);
  if (c == 'n' || c == 't' || c == 'r' || c == '\\' || c == '"') return {2, SpanKind::kEscape};
  return {};
}

// One or two backticks, code that neither starts nor ends with a blank and holds no line break
// and no apostrophe, then as many backticks (a run of another length is code, as in Markdown).
// GNU's `quotes' open with a backtick and close with an apostrophe: "`a' or `b'" is two quotes,
// not the code "a' or ", and stays text a translator turns into the language's quotes.
Match match_code(std::string_view text, std::size_t at) {
  if (at > 0 && text[at - 1] == '`') return {};  // inside a run that did not open code
  std::size_t fence = 0;
  while (at + fence < text.size() && text[at + fence] == '`') ++fence;
  if (fence > 2) return {};  // a fence of a code block, which is not a span of a sentence
  const std::size_t begin = at + fence;
  for (std::size_t i = begin; i < text.size() && i - begin <= kMaxCode; ++i) {
    if (text[i] == '\n' || text[i] == '\r' || text[i] == '\'') return {};
    if (text[i] != '`') continue;
    std::size_t run = 1;
    while (i + run < text.size() && text[i + run] == '`') ++run;
    if (run != fence) {
      i += run - 1;
      continue;
    }
    if (i == begin || is_space(text[begin]) || is_space(text[i - 1])) return {};
    return {i + run - at, SpanKind::kCode};
  }
  return {};
}

TagShape match_tag(std::string_view text, std::size_t at) {
  TagShape tag;
  // An HTML comment stands alone, whole: "<!-- note -->" (the models garbled its words).
  if (text.substr(at, 4) == "<!--") {
    const std::size_t end = text.substr(at, kMaxComment).find("-->", 4);
    if (end == std::string_view::npos) return {};
    return {.length = end + 3, .name = "!--", .closing = false, .self_closing = true};
  }
  std::size_t i = at + 1;
  if (at_or_nul(text, i) == '/') {
    tag.closing = true;
    ++i;
  }
  const std::size_t name_begin = i;
  if (is_digit(at_or_nul(text, i))) {  // react-i18next's <0>...</0> and <1/>: numbered elements
    while (is_digit(at_or_nul(text, i)) && i - name_begin < kMaxNumberedTag) ++i;
    tag.name = text.substr(name_begin, i - name_begin);
    if (!tag.closing && at_or_nul(text, i) == '/') {
      tag.self_closing = true;
      ++i;
    }
    if (at_or_nul(text, i) != '>') return {};
    tag.length = i + 1 - at;
    return tag;
  }
  if (!is_alpha(at_or_nul(text, i))) return {};
  while (i < text.size() &&
         (is_ident(text[i]) || std::string_view(":-.").find(text[i]) != std::string_view::npos)) {
    ++i;
  }
  tag.name = text.substr(name_begin, i - name_begin);
  const std::size_t rest = i;
  // Up to '>', never past a '<': a stray '<' cannot make the scan of every later '<' quadratic.
  // A Hugo shortcode in an attribute's value is part of it: <img src="/docs/{{< param v >}}/a.svg">
  // (read as text, the models translated the attribute names).
  while (i < text.size() && i - at < kMaxTag && text[i] != '>') {
    if (text[i] == '<') {
      const std::size_t shortcode =
          i >= at + 3 && text.substr(i - 2, 2) == "{{" ? template_tag_length(text, i - 2) : 0;
      if (shortcode == 0) break;
      i += shortcode - 2;
      continue;
    }
    ++i;
  }
  if (at_or_nul(text, i) != '>') return {};
  std::string_view inside = text.substr(rest, i - rest);  // between the name and '>'
  if (!inside.empty() && !is_space(inside.front()) && inside != "/") return {};
  if (inside.ends_with('/')) {
    if (tag.closing) return {};
    tag.self_closing = true;
    inside.remove_suffix(1);
  }
  // Attributes: name=value after the tag name. "<file name>" has none: a metavariable.
  std::size_t j = 0;
  while (j < inside.size() && is_space(inside[j])) ++j;
  if (j < inside.size()) {
    if (tag.closing) return {};
    std::size_t k = j;
    while (k < inside.size() && (is_ident(inside[k]) || inside[k] == '-' || inside[k] == ':')) ++k;
    while (k < inside.size() && is_space(inside[k])) ++k;
    tag.has_attributes = k > j && k < inside.size() && inside[k] == '=';
    // "<Sequence [%1]>", "<unnamed %s>": prose in angle brackets, whose inside gets scanned.
    if (!tag.has_attributes && !is_known_tag(tag.name)) return {};
  }
  tag.length = i + 1 - at;
  return tag;
}

}  // namespace rpt::spans
