// The term column opening a line of a program's --help text (docs/documents.md, "What is
// layout"): "  -d, --directories=ACTION  how to handle directories;" translates only "how to
// handle directories;", "  %a   locale's abbreviated weekday name" only its description. Read
// with the description, the demo models translated the options and lost the column ("-I
// Suffix-files=mit --binary-Datei" for "-I   equivalent to --binary-files=without-match"), and
// garbled format directives or dropped them ("%[-][VREC]][.[PREC]] printf-Stil{doxX}LETTER" for
// "%[-][WIDTH][.[PREC]]{doxX}LETTER  printf-style spec", "Spaltennummer" for "F  first line
// number").
#pragma once

#include <cstddef>
#include <string_view>

namespace rpt::documents {

// The length of the term column at text[begin, end) (a line's content, no blank at begin), with
// the blanks after it; 0 when there is none. A column is either
//   - options ("-d,", "--directories=ACTION", "-NUM", "--color[=WHEN],"), each maybe followed by
//     one argument ("-e script,", "-l N,"), single blanks between, and then two blanks or more,
//     or the line's end: a word that is no option nor an option's argument ("-5 degrees is
//     cold") means there is none; or
//   - one term of syntax, two blanks or more and a description: a format directive ("%a", "%%",
//     "%(A=B?T:E)", "%[-][WIDTH][.[PREC]]{doxX}LETTER"), or on an indented line a letter or an
//     upper-case name ("F", "FILE", "GTYPE"), which --help texts list as metavariables.
std::size_t option_column_length(std::string_view text, std::size_t begin, std::size_t end);

}  // namespace rpt::documents
