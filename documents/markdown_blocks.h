// What md4c (a CommonMark parser) reads in a text: its code blocks, which are layout (their lines
// come back as they were), and in a Markdown document the leaf block (paragraph, heading, list
// item, table cell) each run of text belongs to, so that a paragraph wrapped over several lines
// is translated whole. Given a README's fenced block, the demo models rewrote the commands ("pip
// install --upgrade example" came back as "Pipip-Installiere --upgrade Beispiel", the fence
// "```sh" as "»inline«"); read line by line, a wrapped sentence reached the model in pieces
// ("... installed and if" "so, builds and installs ...").
#pragma once

#include <cstddef>
#include <string_view>
#include <utility>
#include <vector>

namespace rpt::documents {

struct MarkdownOptions {
  // A Markdown document: indented code blocks (four blanks after a blank line) too, and the leaf
  // blocks of text. In plain text such indentation is a --help text's or a letter's layout
  // around prose, and line breaks are the author's: only fenced code blocks are read.
  bool document = false;
};

struct MarkdownReading {
  // The byte ranges [first, second) of the code blocks, in text order: a fenced block from the
  // start of its opening fence's line to the end of its last line of code (its closing fence,
  // holding no words, is layout anyway); an indented block from its first line to its last. A
  // Markdown document's front matter (YAML between "---" lines, TOML between "+++" lines, at its
  // start) is one too: its keys are the site generator's, and md4c read them as a heading. So is
  // an HTML comment standing as a block of its own (Node.js's "<!-- YAML\nadded: v11.0.0\n-->"),
  // in any text: the models translated and garbled it ("<!-111.0.0.0.0...").
  std::vector<std::pair<std::size_t, std::size_t>> code_blocks;
  // Markdown documents: each run of text outside code (its offset) with the leaf block it is in
  // (an id, the same for all runs of one block), in text order.
  std::vector<std::pair<std::size_t, int>> texts;
  // Markdown documents: where a run of text ends right before a hard line break (two blanks or
  // a backslash before the line's end): the lines around it are not joined.
  std::vector<std::size_t> hard_breaks;
  // Markdown documents: each table cell with text, as the byte range from its first run of text
  // to the end of its last (the pipes between cells lie outside), in text order.
  std::vector<std::pair<std::size_t, std::size_t>> table_cells;
};

MarkdownReading read_markdown(std::string_view text, const MarkdownOptions& options = {});

using ByteRange = std::pair<std::size_t, std::size_t>;  // [first, second) in the text

// What md4c reads in the lines of `text` (`lines`: each line's range, in order), for the
// segmenter: `document` as MarkdownOptions::document.
struct MarkdownLines {
  // Layout: a code block's line, or a document's link reference definition ("[guide]:
  // https://example.org/guide"; md4c reads no text in it, and the models rewrote destinations).
  std::vector<bool> layout;
  std::vector<bool> joins_previous;  // a document's: of the paragraph of the line before
  // A document's table row: its cells with text, each [after the pipe before it, its pipe after).
  std::vector<std::vector<ByteRange>> cells;
};

MarkdownLines markdown_lines(std::string_view text, const std::vector<ByteRange>& lines,
                             bool document);

}  // namespace rpt::documents
