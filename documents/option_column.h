// The command-line options opening a line of a program's --help text (docs/documents.md, "What is
// layout"): "  -d, --directories=ACTION  how to handle directories;" translates only "how to
// handle directories;". Read with the description, the demo models translated the options and
// lost the column ("-I Suffix-files=mit --binary-Datei" for "-I   equivalent to
// --binary-files=without-match").
#pragma once

#include <cstddef>
#include <string_view>

namespace rpt::documents {

// The length of the option column at text[begin, end) (a line's content, no blank at begin), with
// the blanks after it; 0 when there is none. A column is options ("-d,", "--directories=ACTION",
// "-NUM", "--color[=WHEN],"), each maybe followed by one argument ("-e script,", "-l N,"), single
// blanks between, and then two blanks or more, or the line's end: a word that is no option nor an
// option's argument ("-5 degrees is cold") means there is none.
std::size_t option_column_length(std::string_view text, std::size_t begin, std::size_t end);

}  // namespace rpt::documents
