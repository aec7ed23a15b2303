// The lone-bracket recognizer behind find_protected_spans (spans/protected_spans.h): a word of
// syntax around a bracket that nothing in the text pairs, as regular-expression and parser
// messages name them ("Unmatched ( or \(", "Unmatched [, [^, [:, [., or [=", "missing ) after
// (?C"). Read as text, the demo models closed the bracket or repeated it ("\(n)", "[:, [:, [:,
// [:]"); translators copy it as written (SpanKind::kLoneBracket). Internal to
// spans/. Linear.
//
// Brackets ( ) [ ] { } outside the spans found before pair like bracket_pairs' (a closing one
// with the nearest open one of its kind, closing those opened after it); an escaped bracket
// (\( \) ...) pairs only with escaped ones. A lone bracket's word (a run of non-blanks, less a
// trailing , or ; and the quotation marks around it: the ( of "'(' expected", whose quotes
// translators localize) is a span when it has no run of two letters, no letter right after an
// opening bracket, nothing outside ASCII, no byte of an earlier span and at most
// kMaxLoneBracketWordBytes: "(", "\(", "[^", "(?C", "1)", ":-)", ")". Not spans: "(see below"
// and "(a" (words: a clause cut from its sentence begins so), "%s)" (holds a placeholder),
// brackets that pair.
#pragma once

#include <cstddef>
#include <string_view>
#include <utility>
#include <vector>

namespace rpt::spans {

inline constexpr std::size_t kMaxLoneBracketWordBytes = 16;

// Byte ranges [first, second) of the lone-bracket words of `text`, in text order, outside every
// byte `covered` marks (one flag per byte of `text`: spans found before).
std::vector<std::pair<std::size_t, std::size_t>> find_lone_bracket_words(
    std::string_view text, const std::vector<bool>& covered);

}  // namespace rpt::spans
