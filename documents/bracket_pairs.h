// The bracket and quotation mark pairs of a paragraph that no sentence end may cut
// (docs/documents.md, "Segmentation"): "Read the notes (see the manual. It explains the options.)
// before you start." is one sentence, and so is 'He said: "Open the file. Then save it." and
// left.' Cut inside, the model got "Read the notes (see the manual." and "It explains the
// options.) before you start." and gave back brackets that no longer paired; en-fr opened the
// cut quotation with « and closed it with ".
#pragma once

#include <cstddef>
#include <string_view>
#include <utility>
#include <vector>

namespace rpt::documents {

// A pair longer than this (opening to closing, in bytes: about three sentences) holds sentences
// of their own; each is translated alone, as outside it.
inline constexpr std::size_t kMaxKeptBracketBytes = 300;

// The byte ranges [opening, after closing) of the pairs in `text` no longer than `max_bytes`,
// nested ones included: brackets ( ) [ ] （ ） ［ ］ 【 】 〔 〕 and quotation marks “ ” „ “ „ ” ‘
// ’ ‚ ‘ « » » « ‹ › 「 」 『 』 " ". A closing mark pairs with the nearest open one of its kind,
// closing those opened after it; an opening mark never closed ("(see below. Then") or a closing
// one never opened ("a) Red. b) Blue.") pairs with nothing, so it holds nothing together. A
// straight " opens after the text's start, a blank or an opening bracket and before a non-blank,
// and closes after a non-blank (the inch of 5" does neither); ’ closes only where no letter
// follows (the apostrophe of "Don’t" closes nothing). A mark that may close or open (“ closes „
// and opens “ ”) closes when its kind is open.
std::vector<std::pair<std::size_t, std::size_t>> bracket_pairs(
    std::string_view text, std::size_t max_bytes = kMaxKeptBracketBytes);

}  // namespace rpt::documents
