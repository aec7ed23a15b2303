// A text that is one ICU MessageFormat message with cases — "{count, plural, one {# file} other
// {# files}}", select, selectordinal — read by ICU's MessagePattern (docs/documents.md, "ICU
// messages"). Its case texts are what a model translates; the syntax around them (the argument,
// its type, the selectors, the braces) is layout and comes back byte for byte. Whole, the message
// is one protected span (spans/protected_spans.h): nothing of it would be translated.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rpt::documents {

// Byte ranges [first, second) of the case texts of `text`, in text order, when `text` (blank edges
// apart) is exactly one plural, selectordinal or select argument; a case text that is itself
// exactly one such message gives its own case texts instead ("{g, select, other {{n, plural,
// other {# files}}}}" gives "# files"). Empty when it is not: ICU cannot parse it, text stands
// beside the message ("You have {n, plural, ...}."), or it is another kind of argument ("{n,
// number}"). A case may be empty ("=0 {}"). `text` must be valid UTF-8.
std::vector<std::pair<std::size_t, std::size_t>> icu_case_texts(std::string_view text);

// A sentence around one message moved into each of its cases, as ICU advises messages be written
// (a translation needs the whole sentence, and word order differs between languages): "You have
// {n, plural, one {# file} other {# files}}." becomes "{n, plural, one {You have # file.} other
// {You have # files.}}", blank edges kept outside. nullopt when `text` is not a sentence around
// exactly one plural, selectordinal or select argument, when the text around it holds '#' or an
// apostrophe (ICU reads them otherwise inside a case), or when it would grow past a few KiB.
std::optional<std::string> with_sentence_in_cases(std::string_view text);

// A case's translation as ICU will read it back: an apostrophe the model wrote before '{', '}',
// '#' or '|' ("d'{app}", "l'#", a case ending in "'" before its '}') would start quoted text and
// swallow the syntax after it, so it is doubled ("d''{app}" formats as "d'Writer"). `*_next`:
// the byte that follows each in the message (0: none). Unchanged when the source case itself
// quotes syntax that way ("Type '{' first"): the model copied what it meant.
std::string with_case_apostrophes_escaped(std::string_view source, char source_next,
                                          std::string_view translation, char translation_next);

}  // namespace rpt::documents
