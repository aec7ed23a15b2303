// The bracket pairs of a paragraph that no sentence end may cut (docs/documents.md,
// "Segmentation"): "Read the notes (see the manual. It explains the options.) before you start."
// is one sentence. Cut inside, the model got "Read the notes (see the manual." and "It explains
// the options.) before you start." and gave back brackets that no longer paired.
#pragma once

#include <cstddef>
#include <string_view>
#include <utility>
#include <vector>

namespace rpt::documents {

// A bracket pair longer than this (opening to closing, in bytes: about three sentences) holds
// sentences of their own; each is translated alone, as outside brackets.
inline constexpr std::size_t kMaxKeptBracketBytes = 300;

// The byte ranges [opening, after closing) of the pairs ( ) [ ] （ ） ［ ］ 【 】 〔 〕 in `text`
// no longer than `max_bytes`, nested ones included. A closing bracket pairs with the nearest open
// one of its kind, closing those opened after it; an opening bracket never closed ("(see below.
// Then") or a closing one never opened ("a) Red. b) Blue.") pairs with nothing, so it holds
// nothing together.
std::vector<std::pair<std::size_t, std::size_t>> bracket_pairs(
    std::string_view text, std::size_t max_bytes = kMaxKeptBracketBytes);

}  // namespace rpt::documents
