// Words a model cannot read: letters of a script its source vocabulary lacks (a Hebrew or
// Chinese name in an English sentence, a letter with a combining accent), which reach it only as
// byte pieces or the unknown piece. A model that reads them (Russian words for a ru-en model)
// translates them. Translated, they came back as other bytes ("(עברית)" as "(‒ ‥אאאא)",
// "Open 文件 now." as "Öffne → jetzt öffnen."); carried as protected spans, they come back as
// they were, where the model puts them. engine/span_protection.cc uses this.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "spans/protected_spans.h"

namespace rpt {

// Byte ranges [begin, end) of `source`, sorted and not overlapping.
using ByteSpans = std::vector<std::pair<std::size_t, std::size_t>>;

// Adds a kSymbol span to `spans` (sorted, partners as indices, renumbered) for each word of
// `source` outside them and outside `taken` (glossary matches) that holds a character outside
// ASCII and that `readable` refuses. A word is a run of letters, combining marks and the zero
// width (non-)joiners between them. Returns the words added, in text order. Pure ASCII text
// costs one scan and no call of `readable`.
ByteSpans add_unreadable_words(std::string_view source, const ByteSpans& taken,
                               const std::function<bool(std::string_view word)>& readable,
                               std::vector<ProtectedSpan>& spans);

}  // namespace rpt
