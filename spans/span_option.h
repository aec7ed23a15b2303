// The command-line option recognizer behind find_protected_spans (spans/protected_spans.h): the
// options a program's messages name in their prose ("Use --directories=recurse to search every
// folder.", "cannot combine signal with -l or -t"), which a model reads as words and translates
// (en-fr wrote "--directoriels=rectorescoriel"). Recognized as code (SpanKind::kCode): copied
// as written. Internal to spans/. One pass over the text: linear.
//
// An option starts after the text's start, a blank, a tag's '>', ( [ { ' " ` = , / | (the
// alternatives of "-h/--help", "-a|--all"), Markdown's '*' ("**--all**", as man pages in Markdown
// write options) or a quotation mark (“ ” „ ‘ ’ ‚ « » ‹ ›):
//   - a long option: "--", a letter, then letters, digits, '_' and inner '-' ("--dry-run"), then
//     maybe "=VALUE" (printable ASCII but < > " ` \ and no blank; its edge punctuation
//     . , ; : ! ? ) ] ' left out), a quoted "='VALUE'" or '="VALUE"' (quotes kept, no line
//     break inside) or "[=VALUE]" ("--color[=WHEN]");
//   - a short option: '-' and one letter or digit ("-r", "-1"), ending the word (a blank, the
//     text's end, a tag's '<', a quotation mark, or . , ; : ! ? ) ] ' " ` / | * after it).
// Not options: "--" alone or in prose ("yes -- no", "a--b"), "e-mail", "-5%", "-rf" (several
// letters could be a word: "-ish"), list dashes ("- item").
#pragma once

#include <cstddef>
#include <string_view>
#include <utility>
#include <vector>

namespace rpt::spans {

// Byte ranges [first, second) of the options of `text`, in text order, not overlapping.
std::vector<std::pair<std::size_t, std::size_t>> find_command_options(std::string_view text);

}  // namespace rpt::spans
