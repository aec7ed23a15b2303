#include "documents/icu_message.h"

#include <gtest/gtest.h>
#include <unicode/msgfmt.h>

#include <string>
#include <vector>

#include "documents/segmenter.h"

namespace rpt::documents {
namespace {

using Strings = std::vector<std::string>;

// `message` formatted by ICU for `locale` (French unless told) with the arguments n (a number)
// and app ("Writer").
std::string formatted(const std::string& message, int n, const char* locale = "fr") {
  UErrorCode status = U_ZERO_ERROR;
  icu::MessageFormat format(icu::UnicodeString::fromUTF8(message), icu::Locale(locale), status);
  EXPECT_TRUE(U_SUCCESS(status)) << message << ": " << u_errorName(status);
  const icu::UnicodeString names[] = {"n", "app"};
  const icu::Formattable values[] = {icu::Formattable(n), icu::Formattable("Writer")};
  icu::UnicodeString result;
  format.format(names, values, 2, result, status);
  EXPECT_TRUE(U_SUCCESS(status)) << message << ": " << u_errorName(status);
  std::string utf8;
  return result.toUTF8String(utf8);
}

SegmentationOptions into(const char* target_language) {
  SegmentationOptions options;
  options.target_language = target_language;
  return options;
}

Strings case_texts(std::string_view text) {
  Strings texts;
  for (const auto& [first, last] : icu_case_texts(text)) {
    texts.emplace_back(text.substr(first, last - first));
  }
  return texts;
}

TEST(IcuMessage, CasesOfPluralSelectAndSelectordinal) {
  EXPECT_EQ(case_texts("{count, plural, one {# file} other {# files}}"),
            (Strings{"# file", "# files"}));
  EXPECT_EQ(case_texts("{count,plural,offset:1 =0{No one} =1 {Only {host}} other{{host} and # "
                       "others}}"),
            (Strings{"No one", "Only {host}", "{host} and # others"}));
  EXPECT_EQ(case_texts("{gender, select, female {She replied.} male {He replied.} other {They "
                       "replied.}}"),
            (Strings{"She replied.", "He replied.", "They replied."}));
  EXPECT_EQ(case_texts("{n, selectordinal, one {#st} two {#nd} few {#rd} other {#th}}"),
            (Strings{"#st", "#nd", "#rd", "#th"}));
  EXPECT_EQ(case_texts("  {n, plural, =0 {} other {# items}}\n"), (Strings{"", "# items"}));
  // ICU's quoting: '{' is a literal brace inside the case, not an argument.
  EXPECT_EQ(case_texts("{n, plural, other {'{'# files'}'}}"), (Strings{"'{'# files'}'"}));
}

TEST(IcuMessage, ACaseThatIsAMessageGivesItsOwnCases) {
  EXPECT_EQ(case_texts("{g, select, female {{n, plural, one {She has # file} other {She has # "
                       "files}}} other { {n, plural, other {They have # files}} }}"),
            (Strings{"She has # file", "She has # files", "They have # files"}));
  // A case with words beside its message is one case text.
  EXPECT_EQ(case_texts("{g, select, other {Hi, {n, plural, other {# files}}}}"),
            (Strings{"Hi, {n, plural, other {# files}}"}));
}

TEST(IcuMessage, ASentenceAroundAMessageMovesIntoItsCases) {
  EXPECT_EQ(with_sentence_in_cases("You have {count, plural, one {# file} other {# files}}."),
            "{count, plural, one {You have # file.} other {You have # files.}}");
  EXPECT_EQ(with_sentence_in_cases("  Hi {name}, {g, select, female {she} other {they}} left.\n"),
            "  {g, select, female {Hi {name}, she left.} other {Hi {name}, they left.}}\n");
  // Nested messages stay inside their case; simple arguments move with the sentence.
  EXPECT_EQ(with_sentence_in_cases("On {d, date}: {g, select, other {{n, plural, other {# x}}}}"),
            "{g, select, other {On {d, date}: {n, plural, other {# x}}}}");
  for (const char* text : {
           "{count, plural, one {# file} other {# files}}",  // already one message
           "No message {name} here.",
           "{a, plural, other {x}} and {b, plural, other {y}}",  // two messages
           "Item # {n, plural, other {# files}}",                // '#' would become the number
           "Don't {n, plural, other {# files}}",                 // the apostrophe would quote
           "Broken {n, plural, other {x}",
       }) {
    EXPECT_FALSE(with_sentence_in_cases(text).has_value()) << text;
  }
  // Segmented: the sentence in each case, each case a segment.
  const SegmentedText s = segment_text("You have {n, plural, one {# file} other {# files}}.", {});
  EXPECT_EQ(s.segments, (Strings{"You have # file.", "You have # files."}));
  EXPECT_EQ(s.separators, (Strings{"{n, plural, one {", "} other {", "}}"}));
}

// Angular extracts each plural to a unit of its own, its interpolations as <x/> elements whose
// attributes hold braces (XLIFF 1.2) or <ph/> (XLIFF 2.0): markup, not MessageFormat.
TEST(IcuMessage, TagsInACaseAreMarkup) {
  EXPECT_EQ(case_texts("{VAR_PLURAL, plural, =0 {just now} =1 {one minute ago} other {<x "
                       "id=\"INTERPOLATION\" equiv-text=\"{{minutes}}\"/> minutes ago}}"),
            (Strings{"just now", "one minute ago",
                     "<x id=\"INTERPOLATION\" equiv-text=\"{{minutes}}\"/> minutes ago"}));
  EXPECT_EQ(case_texts("{VAR_SELECT, select, male {<ph id=\"0\" equiv=\"INTERPOLATION\" disp=\"{{ "
                       "name }}\"/> is his} other {<pc id=\"1\" dispStart=\"{b}\">theirs</pc>}}"),
            (Strings{"<ph id=\"0\" equiv=\"INTERPOLATION\" disp=\"{{ name }}\"/> is his",
                     "<pc id=\"1\" dispStart=\"{b}\">theirs</pc>"}));
}

TEST(IcuMessage, OffsetsAreUtf8Bytes) {
  const std::string text = "{g, select, female {Sie hat 😀 gespeichert} other {Er hat ✓ ß}}";
  EXPECT_EQ(case_texts(text), (Strings{"Sie hat 😀 gespeichert", "Er hat ✓ ß"}));
}

TEST(IcuMessage, OtherTextsHaveNoCases) {
  for (const char* text : {
           "You have {count, plural, one {# file} other {# files}}.",  // words beside it
           "{count, plural, one {# file} other {# files}} left",
           "{n, number}",                                            // no cases
           "{0}", "{name}", "{}", "{a}{b}", "plain text", "",        // no message
           "{n, plural, one {x} other {y}",                          // unbalanced
           "{n, plural, one {x}}",                                   // ICU requires "other"
           "{n, plural, one {x} other {y}} {m, plural, other {z}}",  // two messages
           "{n, choice, 0#none|1#one}",                              // ChoiceFormat: not cases
       }) {
    EXPECT_TRUE(icu_case_texts(text).empty()) << text;
  }
  EXPECT_TRUE(icu_case_texts("{a, select, x {\xFF} other {y}}").empty());  // not UTF-8
}

TEST(IcuMessage, DeepNestingIsRefusedWithoutParsing) {
  std::string deep;
  for (int i = 0; i < 100000; ++i) deep += "{a, select, other ";
  deep += "x";
  for (int i = 0; i < 100000; ++i) deep += "}";
  EXPECT_TRUE(icu_case_texts(deep).empty());
  std::string nested = "x";
  for (int i = 0; i < 8; ++i) nested = "{a, select, other {" + nested + "}}";
  EXPECT_EQ(case_texts(nested), (Strings{"x"}));
}

TEST(IcuMessage, SegmentsAreTheCasesAndTheSyntaxIsLayout) {
  // A '#' opening a case is the plural's number, not a Markdown heading's marker: a protected
  // span the model moves with its words (docs/protected-spans.md, plural_number).
  const std::string text =
      "{count, plural, =0 {No files.} one {One file. Open it?} other {# files}}";
  const SegmentedText s = segment_text(text, {});
  EXPECT_EQ(s.segments, (Strings{"No files.", "One file.", "Open it?", "# files"}));
  EXPECT_EQ(s.separators, (Strings{"{count, plural, =0 {", "} one {", " ", "} other {", "}}"}));
  EXPECT_EQ(join_segments(s, s.segments), text);
  EXPECT_EQ(join_segments(s, {"Keine Dateien.", "Eine Datei.", "Öffnen?", "# Dateien"}),
            "{count, plural, =0 {Keine Dateien.} one {Eine Datei. Öffnen?} other {# "
            "Dateien}}");
  // Outside a message it still marks a heading.
  EXPECT_EQ(segment_text("# Getting started", {}).segments, (Strings{"Getting started"}));

  // Split "none" keeps each case whole; an empty case and a case of symbols are layout.
  const SegmentedText whole =
      segment_text("{n, plural, =0 {} =1 {✓} one {One file. Open it?} other {# files}}",
                   {.split = SplitSentences::kNone, .language = "en", .keep_together = {}});
  EXPECT_TRUE(whole.whole);
  EXPECT_EQ(whole.segments, (Strings{"One file. Open it?", "# files"}));
  EXPECT_EQ(whole.separators, (Strings{"{n, plural, =0 {} =1 {✓} one {", "} other {", "}}"}));
}

TEST(IcuMessage, AnApostropheBeforeSyntaxInATranslationIsDoubled) {
  // French elides before a vowel: "d'{app}", "l'#" and a case ending in "'" before its '}' would
  // quote the syntax after the apostrophe, and ICU would print the braces or fail.
  const std::string text = "{n, plural, one {# file of {app}} other {# files of {app}}}";
  const SegmentedText s = segment_text(text, {});
  ASSERT_TRUE(s.message_cases);
  ASSERT_EQ(s.segments.size(), 2u) << ::testing::PrintToString(s.segments);
  EXPECT_EQ(join_segments(s, s.segments), text);
  const std::string joined =
      join_segments(s, {"# fichier d'{app}", "# fichiers de l'auteur d'{app}'"});
  EXPECT_EQ(joined,
            "{n, plural, one {# fichier d''{app}} other {# fichiers de l'auteur d''{app}''}}");
  EXPECT_EQ(formatted(joined, 1), "1 fichier d'Writer");
  EXPECT_EQ(formatted(joined, 3), "3 fichiers de l'auteur d'Writer'");
  // Already doubled: left as it is.
  EXPECT_EQ(join_segments(s, {"# fichier d''{app}", "# fichiers"}),
            "{n, plural, one {# fichier d''{app}} other {# fichiers}}");
  // Without a message around them the same translations are left alone.
  const SegmentedText plain = segment_text("One file of {app}.", {});
  EXPECT_FALSE(plain.message_cases);
  EXPECT_EQ(join_segments(plain, {"Un fichier d'{app}."}), "Un fichier d'{app}.");
}

TEST(IcuMessage, ASourceThatQuotesSyntaxKeepsItsTranslationsQuotes) {
  // The case means a literal brace: the model copied the quoting, which must stay as written.
  const std::string text = "{n, plural, one {Type '{' once} other {Type '{' # times}}";
  const SegmentedText s = segment_text(text, {});
  ASSERT_TRUE(s.message_cases);
  EXPECT_EQ(join_segments(s, s.segments), text);
  const std::string joined = join_segments(s, {"Tapez '{' une fois", "Tapez '{' # fois"});
  EXPECT_EQ(joined, "{n, plural, one {Tapez '{' une fois} other {Tapez '{' # fois}}");
  EXPECT_EQ(formatted(joined, 2), "Tapez { 2 fois");
  EXPECT_EQ(with_case_apostrophes_escaped("Type '{' # times", 0, "Tapez '{' # fois", 0),
            "Tapez '{' # fois");
  EXPECT_EQ(with_case_apostrophes_escaped("Open # files", 0, "l'# fichiers", 0), "l''# fichiers");
  EXPECT_EQ(with_case_apostrophes_escaped("Open it", '}', "l'ouvrir'", '}'), "l'ouvrir''");
  EXPECT_EQ(with_case_apostrophes_escaped("Open it", '}', "l'''", '}'), "l''''");
}

// Russian has one (1, 21), few (2-4, 22-24), many (0, 5-20) and other (fractions); English
// sources have one and other. The model sees each added case with a number of its category.
TEST(IcuMessage, APluralGainsTheTargetLanguagesCategories) {
  const std::string text = "{n, plural, one {# file} other {# files}}";
  const SegmentedText s = segment_text(text, into("ru"));
  ASSERT_TRUE(s.message_cases);
  EXPECT_EQ(s.segments, (Strings{"# file", "2 files", "5 files", "# files"}));
  EXPECT_EQ(s.separators, (Strings{"{n, plural, one {", "} few {", "} many {", "} other {", "}}"}));
  ASSERT_EQ(s.plural_samples.size(), 2u);
  EXPECT_EQ(s.plural_samples[0].keyword, "few");
  EXPECT_EQ(s.plural_samples[1].number, "5");
  // The numbers become '#' again; a case that reads as "other" does is dropped.
  const std::string joined = join_segments(s, {"# файл", "2 файла", "5 файлов", "# файлов"});
  EXPECT_EQ(joined, "{n, plural, one {# файл} few {# файла} other {# файлов}}");
  EXPECT_EQ(formatted(joined, 1, "ru"), "1 файл");
  EXPECT_EQ(formatted(joined, 23, "ru"), "23 файла");
  EXPECT_EQ(formatted(joined, 7, "ru"), "7 файлов");
  // Languages with the source's categories, or none of their own, add nothing.
  EXPECT_TRUE(segment_text(text, into("de")).plural_samples.empty());
  EXPECT_TRUE(segment_text(text, into("ja")).plural_samples.empty());
  EXPECT_TRUE(segment_text(text, {}).plural_samples.empty());
  EXPECT_EQ(segment_text(text, into("de")).segments, (Strings{"# file", "# files"}));
  // POSIX and BCP 47 names; an explicit case the target does not name stays as it is.
  const SegmentedText polish =
      segment_text("{n, plural, =0 {No files} one {# file} other {# files}}", into("pl_PL.UTF-8"));
  EXPECT_EQ(polish.segments, (Strings{"No files", "# file", "2 files", "5 files", "# files"}));
  // A sample the case already shows is passed over: "2" would come back as '#' twice.
  const SegmentedText two =
      segment_text("{n, plural, one {# file} other {# files in 2 dirs}}", into("ru"));
  EXPECT_EQ(two.segments[1], "3 files in 2 dirs");
  EXPECT_EQ(join_segments(two, two.segments),
            "{n, plural, one {# file} other {# files in 2 dirs}}");
}

TEST(IcuMessage, AnAddedCaseWithoutItsNumberTakesTheOtherCase) {
  const SegmentedText s = segment_text("{n, plural, one {# file} other {# files}}", into("ru"));
  // "2" written as a word: the case cannot hold '#', and "other" stands for it.
  EXPECT_EQ(join_segments(s, {"# файл", "два файла", "5 файлов", "# файлов"}),
            "{n, plural, one {# файл} other {# файлов}}");
  // French "many" (1,000,000) written with group separators: "1 000 000 de fichiers".
  const SegmentedText french =
      segment_text("{n, plural, one {# file} other {# files}}", into("fr"));
  ASSERT_EQ(french.plural_samples.size(), 1u);
  EXPECT_EQ(french.plural_samples[0].keyword, "many");
  EXPECT_EQ(french.segments[1], french.plural_samples[0].number + " files");
  const std::string joined =
      join_segments(french, {"# fichier", "1 000 000 de fichiers", "# fichiers"});
  EXPECT_EQ(joined, "{n, plural, one {# fichier} many {# de fichiers} other {# fichiers}}");
  EXPECT_EQ(formatted(joined, 2000000), "2\u202f000\u202f000 de fichiers");
  EXPECT_EQ(formatted(joined, 3), "3 fichiers");
  // Translated as "other" is: dropped, blanks after it too.
  EXPECT_EQ(join_segments(french, {"# fichier", "1.000.000 fichiers", "# fichiers"}),
            "{n, plural, one {# fichier} other {# fichiers}}");
}

TEST(IcuMessage, OnlyPluralsWhoseOtherCaseShowsTheNumberGainCases) {
  for (const std::string text : {
           "{n, plural, one {A file} other {Files}}",                        // no '#'
           "{n, selectordinal, one {#st} two {#nd} few {#rd} other {#th}}",  // ordinal rules
           "{g, select, male {He} other {They}}",
           "{n, plural, one {# file} other {{k, select, a {# files} other {# items}}}}",
           "{n, plural, one {# file} other {# files}}, {k, plural, other {# dirs}}",  // two
       }) {
    const SegmentedText s = segment_text(text, into("ru"));
    EXPECT_TRUE(s.plural_samples.empty()) << text;
    EXPECT_EQ(join_segments(s, s.segments), text);
  }
  // Text that ICU cannot read back is left as the model wrote it.
  EXPECT_EQ(
      with_plural_samples_restored("{n, plural, one {# f} few {2 {f} other {# f}}", {{"few", "2"}}),
      "{n, plural, one {# f} few {2 {f} other {# f}}");
}

}  // namespace
}  // namespace rpt::documents
