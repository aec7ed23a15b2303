// The Markdown emphasis recognizer behind find_protected_spans (spans/protected_spans.h): the
// delimiter runs of **bold**, *em*, __strong__ and _em_, as md4c (a CommonMark parser) pairs
// them. Internal to spans/.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace rpt::spans {

// One emphasis pair: the byte ranges of its opening and closing delimiter runs ("**", "*", "__"
// or "_"). ***x*** is two pairs, "*" around "**".
struct EmphasisPair {
  std::size_t open_begin = 0;
  std::size_t open_end = 0;
  std::size_t close_begin = 0;
  std::size_t close_end = 0;
};

// The emphasis pairs of `text` read as one CommonMark document (no indented code blocks, no HTML
// blocks: a segment's indentation or leading <p> does not hide its emphasis), in the order of
// their openers. Left out: a pair whose delimiters md4c's events do not place beyond doubt (an
// empty link inside, a reference link's label before a closer), and a pair whose opener is
// followed by punctuation other than ` < [, another opener or a command-line option ("**--all**"):
// the file filter "*.png;*.jpg" is emphasis to CommonMark, not to a translator.
std::vector<EmphasisPair> find_emphasis(std::string_view text);

}  // namespace rpt::spans
