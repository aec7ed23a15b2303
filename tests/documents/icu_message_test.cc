#include "documents/icu_message.h"

#include <gtest/gtest.h>
#include <unicode/msgfmt.h>

#include <string>
#include <vector>

#include "documents/segmenter.h"

namespace rpt::documents {
namespace {

using Strings = std::vector<std::string>;

// `message` formatted by ICU for French with the arguments n (a number) and app ("Writer").
std::string formatted(const std::string& message, int n) {
  UErrorCode status = U_ZERO_ERROR;
  icu::MessageFormat format(icu::UnicodeString::fromUTF8(message), icu::Locale("fr"), status);
  EXPECT_TRUE(U_SUCCESS(status)) << message << ": " << u_errorName(status);
  const icu::UnicodeString names[] = {"n", "app"};
  const icu::Formattable values[] = {icu::Formattable(n), icu::Formattable("Writer")};
  icu::UnicodeString result;
  format.format(names, values, 2, result, status);
  EXPECT_TRUE(U_SUCCESS(status)) << message << ": " << u_errorName(status);
  std::string utf8;
  return result.toUTF8String(utf8);
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

}  // namespace
}  // namespace rpt::documents
