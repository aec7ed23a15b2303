// The markup recognizers behind find_protected_spans (spans/protected_spans.h): variables,
// entities, escapes, Markdown code, and tags, defined in span_markup.cc. What they share with the
// format-string recognizers is in spans/span_format.h. Markdown emphasis and links are
// spans/span_markdown.h.
#pragma once

#include <cstddef>
#include <string_view>

#include "spans/span_format.h"

namespace rpt::spans {

// text[at] == '$': $(VAR) ${var} $VAR $var_name $unit.name|, i18next's $t(key, {...})
Match match_variable(std::string_view text, std::size_t at);
// text[at] == '&': &amp; &#160; &#x2026;
Match match_entity(std::string_view text, std::size_t at);
// text[at] == '\\': \n \t \r \\ \" written as two characters.
Match match_escape(std::string_view text, std::size_t at);
// text[at] == '`': Markdown's inline code, `make install` or ``a ` b``.
Match match_code(std::string_view text, std::size_t at);

// Something shaped like a markup tag at text[at] == '<'. Whether it is a span depends on its
// name and on the rest of the text (pairing), which the caller decides.
struct TagShape {
  std::size_t length = 0;  // 0: not tag-shaped
  std::string_view name;
  bool closing = false;         // </name>
  bool self_closing = false;    // <name/> <name attr="x"/>
  bool has_attributes = false;  // <name attr=...>
};
TagShape match_tag(std::string_view text, std::size_t at);

// HTML, Pango, Qt rich text, DocBook and KDE element names (ASCII case-insensitive), and the
// numbers react-i18next's Trans component names its elements with (<0>, </1>, <2/>). Other names
// in angle brackets are usually metavariables that translators translate (<number>, <file>).
bool is_known_tag(std::string_view name);

// ASCII case-insensitive equality (tag names).
bool same_name(std::string_view a, std::string_view b);

}  // namespace rpt::spans
