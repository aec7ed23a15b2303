// The code blocks of a text, which are layout: their lines come back as they were. Given a
// README's fenced block, the demo models rewrote the commands ("pip install --upgrade example"
// came back as "Pipip-Installiere --upgrade Beispiel", the fence "```sh" as "»inline«").
#pragma once

#include <cstddef>
#include <string_view>
#include <utility>
#include <vector>

namespace rpt::documents {

struct CodeBlockOptions {
  // Indented code blocks too (four blanks after a blank line): in a Markdown document. In plain
  // text such indentation is a --help text's or a letter's layout around prose.
  bool indented = false;
};

// The byte ranges [first, second) of `text`'s code blocks as md4c (CommonMark) reads them, in
// text order: a fenced block from the start of its opening fence's line to the end of its last
// line of code (its closing fence, holding no words, is layout anyway); an indented block from its
// first line to its last.
std::vector<std::pair<std::size_t, std::size_t>> code_blocks(std::string_view text,
                                                             const CodeBlockOptions& options = {});

}  // namespace rpt::documents
