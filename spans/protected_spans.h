// Recognition of protected spans in source text: the parts of a UI string that a program
// substitutes or renders (placeholders, markup, escapes) and that a translation must carry over
// verbatim, exactly as many times as the source has them. One definition shared by the engine's
// span protection (engine/span_protection.h), the server, rpt-translate and rpt-spans.
//
// Never fails: any bytes in, spans out (text that is not valid UTF-8 is scanned bytewise).
// Spans never overlap and come in text order. docs/protected-spans.md lists what is and is not a
// span, with the behaviour on malformed input (lone %, unbalanced tags, code braces).
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace rpt {

enum class SpanKind {
  kPrintf,      // %s %d %.2f %1$s %lu %qs %q+D %zu %.*s
  kPercent,     // %% (a literal percent sign in a format string)
  kPositional,  // Qt / KDE / Windows: %1 %2 %n
  kBrace,       // ICU / .NET / Python: {0} {} {name} {name:fmt}
  kIcuMessage,  // {count, plural, one {# file} other {# files}}: the whole message
  kVariable,    // $(VAR) ${var} $VAR $var_name
  kTag,         // <b> </b> <br/> <span foreground="red">: markup (paired or known), and
                // Markdown's pairs: emphasis ** ** * * __ __ _ _, links [ ](dest), images ![ ](src)
  kEntity,      // &amp; &#160; &#x2026;
  kEscape,      // \n \t \r \\ \" written as two characters
  kAccelerator,  // the marker of a keyboard accelerator: & in "&File", _ in "_Open"
  kSymbol,  // ✓ © ° ™ and emoji sequences (😀 👍🏽 🇩🇪): pictographs a model would
            // swap
  kUrl,     // https://example.com/a, www.example.org, example.com/a.b, user@example.com
  kCode,    // Markdown's inline code: `make install`, ``a ` b``, a collapsed reference link
            // [FAQ][] (its text is its label); command-line options: --dry-run, --color[=WHEN], -r
  kNumber,  // 2024, 10:30, 2024-01-03, 1.5, 1,234,567 (two digits or a separator)
  kPluralNumber,  // # standing alone: an ICU plural case's number ("{n, plural, other {# files}}")
  kLoneBracket,   // a bracket nothing pairs, with the syntax around it: "(" "\(" "[^" "(?C" "1)"
};

struct ProtectedSpan {
  std::size_t begin = 0;  // byte offset in the text
  std::size_t end = 0;    // one past the span's last byte
  SpanKind kind = SpanKind::kPrintf;
  // For a kTag: the index (in the returned vector) of its matching opening/closing tag, or -1
  // (a self-closing tag, or one whose partner the text does not have). -1 for other kinds.
  int partner = -1;
  // For a kTag: a closing tag (</b>, and the second marker of a Markdown emphasis pair, whose
  // markers open and close alike: **bold**).
  bool closing = false;
};

struct SpanRecognitionOptions {
  // Keyboard accelerator markers (kAccelerator). They are not copied verbatim: span protection
  // removes the marker before translation and puts it back on a letter of the translation.
  bool accelerators = true;
};

std::vector<ProtectedSpan> find_protected_spans(std::string_view text,
                                                const SpanRecognitionOptions& options = {});

// find_protected_spans with each Markdown link closer replaced by the spans inside it
// ("[%d files](%s)" gives "[", "%d" and the "%s" of "](%s)"), partners not kept: the directives a
// format string's arguments fill, which msgfmt's checks count, though the model sees the closer
// as one span of markup.
std::vector<ProtectedSpan> find_argument_spans(std::string_view text,
                                               const SpanRecognitionOptions& options = {});

// Merges `added` (in text order, outside every span of `spans`, without partners) into `spans`
// (in text order), each span's partner index renumbered: spans found by another pass (symbols,
// the engine's words a model cannot write) joining those of the first.
void merge_spans(std::vector<ProtectedSpan>& spans, const std::vector<ProtectedSpan>& added);

// "printf", "percent", "positional", "brace", "icu_message", "variable", "tag", "entity",
// "escape", "accelerator", "symbol", "url", "code", "number", "plural_number", "lone_bracket": the
// names rpt-spans prints and the metrics use.
const char* span_kind_name(SpanKind kind);

}  // namespace rpt
