// The Markdown recognizer behind find_protected_spans (spans/protected_spans.h): the pairs of
// delimiters around text, as md4c (a CommonMark parser) reads them: emphasis (**bold**, *em*,
// __strong__, _em_) and inline links and images ([text](destination "title"), ![alt](src)).
// Internal to spans/.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace rpt::spans {

// One pair: the byte ranges of its opening and closing delimiters. Emphasis: the runs ("**",
// "*", "__" or "_"; ***x*** is two pairs, "*" around "**"). A link: "[" and "](destination)",
// the title and blanks inside the brackets with it, or "][label]"; an image: "![" and "](src)".
struct MarkdownPair {
  std::size_t open_begin = 0;
  std::size_t open_end = 0;
  std::size_t close_begin = 0;
  std::size_t close_end = 0;
  // A collapsed reference link ("[FAQ][]"): its text is its label, which names its definition
  // and must stay as written; not a pair to translate inside but one span from open to close.
  bool whole = false;
};

// The emphasis, link and image pairs of `text` read as one CommonMark document (no indented code
// blocks, no HTML blocks: a segment's indentation or leading <p> does not hide them), in the
// order of their openers. A reference link ("[text][label]", "[text][]") is a pair whose closer
// is "][label]", its definition elsewhere in the document. Left out: a pair whose delimiters
// md4c's events do not place beyond doubt (an empty link, or one inside emphasis: "*[](u)*"; a
// shortcut reference "[label]" and emphasis closing after it), and emphasis whose opener is
// followed by punctuation other than ` < [, another opener or a command-line option
// ("**--all**"): the file filter "*.png;*.jpg" is emphasis to CommonMark, not to a translator.
std::vector<MarkdownPair> find_markdown_pairs(std::string_view text);

}  // namespace rpt::spans
