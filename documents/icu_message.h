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
// exactly one plural, selectordinal or select argument, when the text around it holds '#', an
// apostrophe or a lone brace (ICU reads them otherwise inside a case), when it would grow past a
// few KiB, or when the result would not be one message with cases (icu_case_texts).
std::optional<std::string> with_sentence_in_cases(std::string_view text);

// A case a plural message gains for its target language: the target's plural rules have a
// category the message lacks ("few" and "many" in Russian, "two" in Welsh), and the model is
// shown the message's "other" case with a number of that category in place of '#', so that it
// inflects for that number: "# files" with 3 becomes "3 files" ("3 файла" in Russian).
struct PluralSample {
  std::string keyword;  // "few"
  std::string number;   // "3", written where the other case has '#'
};

struct MessageWithTargetCases {
  std::string text;  // the message with the added cases, before its "other" case
  std::vector<PluralSample> samples;
};

// `text` (one plural message, blank edges apart: icu_case_texts) with a case for each cardinal
// plural category of `target_language` (an ICU locale: "ru", "pl", "fr") that it has neither as
// a keyword nor needs ("other" is always there), each the "other" case with the category's first
// integer sample of at least 2 (else its first integer) in place of '#'. nullopt when nothing is
// added: not one plural message, its "other" case holds no '#' or holds a message of its own,
// the target's rules have no category the message lacks.
std::optional<MessageWithTargetCases> with_target_plural_cases(std::string_view text,
                                                               std::string_view target_language);

// The translation of a message with_target_plural_cases made, as the target language's file
// holds it: in each added case the sample number becomes '#' again (written with group
// separators too: "1 000 000", "1.000.000"); a case whose translation lost its number takes
// the "other" case's translation; an added case that then reads as "other" does is dropped
// (ICU formats its numbers with "other" anyway). Unchanged when ICU cannot parse `translation`.
std::string with_plural_samples_restored(std::string_view translation,
                                         const std::vector<PluralSample>& samples);

// A case's translation as ICU will read it back: an apostrophe the model wrote before '{', '}',
// '#' or '|' ("d'{app}", "l'#", a case ending in "'" before its '}') would start quoted text and
// swallow the syntax after it, so it is doubled ("d''{app}" formats as "d'Writer"). `*_next`:
// the byte that follows each in the message (0: none). Unchanged when the source case itself
// quotes syntax that way ("Type '{' first"): the model copied what it meant.
std::string with_case_apostrophes_escaped(std::string_view source, char source_next,
                                          std::string_view translation, char translation_next);

}  // namespace rpt::documents
