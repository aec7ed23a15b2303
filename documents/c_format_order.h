// A translation of a C format string (`#, c-format`) whose unnumbered directives came out in
// another order than the source's ("%s on %s:%d" -> "%s:%d %s"): printf would read the
// arguments with the wrong types, and msgfmt --check refuses the entry. The model keeps every
// directive (protected spans) but may move one (or a span left out is put where the hypothesis
// ends). gettext lets a msgstr number its directives (%1$s, %3$d), so the translation's
// directives are rewritten with the position of the source directive each one is.
#pragma once

#include <string>
#include <string_view>

namespace rpt::documents {

// `translation` with positions when its directives are out of the source's order; unchanged
// when they are in order (by type), when the source already uses positions or `*` widths, or
// when the two do not hold the same directives.
std::string c_directives_in_source_order(std::string_view source, std::string_view translation);

}  // namespace rpt::documents
