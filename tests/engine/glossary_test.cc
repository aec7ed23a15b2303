// Glossaries: the matching rules (case folding, whole words, longest first, never inside a
// protected span, the first glossary on ties), every refusal, and enforcement on the bundled
// en-de model with both methods: counterfactual targets appear as often as their sources,
// multi-word and multi-piece terms, do-not-translate, batch invariance, max_length too short.
#include "engine/glossary.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "engine/translator.h"
#include "kernels/errors.h"
#include "tests/support/source_dir.h"

namespace rpt {
namespace {

Glossary make(std::vector<GlossaryEntry> entries) {
  return Glossary(std::move(entries), GlossaryLimits::kEntriesPerCall);
}

// The matched source texts of `text`, in order.
std::vector<std::string> matched(const std::string& text, const GlossaryUse& use,
                                 bool spans = true) {
  std::vector<std::string> out;
  const auto found = spans ? find_protected_spans(text) : std::vector<ProtectedSpan>{};
  for (const GlossaryMatch& m : match_glossary(text, use, found)) {
    out.push_back(text.substr(m.begin, m.end - m.begin));
  }
  return out;
}

std::string refusal(std::vector<GlossaryEntry> entries, int limit = 1000) {
  try {
    Glossary glossary(std::move(entries), limit);
  } catch (const InvalidArgument& e) {
    return e.message();
  }
  return "accepted";
}

TEST(GlossaryMatchTest, CaseFoldedWholeWords) {
  const Glossary g = make({{"file", "Akte"}, {"ärger", "Ärgernis"}});
  const GlossaryUse use{{&g}};
  EXPECT_EQ(matched("FILE, File and file", use),
            (std::vector<std::string>{"FILE", "File", "file"}));
  EXPECT_TRUE(matched("profile files filed", use).empty());
  EXPECT_EQ(matched("Ärger! (ÄRGER)", use), (std::vector<std::string>{"Ärger", "ÄRGER"}));
  EXPECT_TRUE(matched("file_name", use).empty());  // an identifier is one word
}

TEST(GlossaryMatchTest, LongestEntryFirstThenEarlierGlossary) {
  const Glossary call = make({{"file", "Akte"}, {"open file", "Akte öffnen"}});
  const Glossary named = make({{"file", "Datei"}, {"file server", "Dateiserver"}});
  const GlossaryUse use{{&call, &named}};
  const auto matches = match_glossary("Open file on the file server, then file it.", use, {});
  ASSERT_EQ(matches.size(), 3u);
  EXPECT_EQ(matches[0].glossary, 0);  // "Open file": longest at its position
  EXPECT_EQ(call.entries()[static_cast<std::size_t>(matches[0].entry)].target, "Akte öffnen");
  EXPECT_EQ(matches[1].glossary, 1);  // "file server": only the named glossary has it
  EXPECT_EQ(named.entries()[static_cast<std::size_t>(matches[1].entry)].target, "Dateiserver");
  EXPECT_EQ(matches[2].glossary, 0);  // "file": both have it, the call's wins
}

TEST(GlossaryMatchTest, TermsWithPunctuationAndNeverInsideSpans) {
  const Glossary g = make({{"C++", "C++"}, {"name", "Name"}, {"title", "Titel"}});
  const GlossaryUse use{{&g}};
  EXPECT_EQ(matched("Use C++ or C++17", use), (std::vector<std::string>{"C++", "C++"}));
  // {name} is a placeholder and the title attribute is inside a tag: both protected.
  EXPECT_EQ(matched("Set {name} in <a title=\"name\">the name</a> title", use),
            (std::vector<std::string>{"name", "title"}));
  // Without span recognition the same text matches everywhere.
  EXPECT_EQ(matched("Set {name}", use, false), (std::vector<std::string>{"name"}));
}

TEST(GlossaryMatchTest, SentenceInitialCapital) {
  const Glossary g = make({{"settings", "Konfiguration"}, {"Qt", "Qt"}});
  const GlossaryUse use{{&g}};
  const auto first = match_glossary("\"Settings\" and settings", use, {});
  ASSERT_EQ(first.size(), 2u);
  EXPECT_TRUE(first[0].initial_capital);
  EXPECT_TRUE(first[0].capitalized);
  EXPECT_FALSE(first[1].initial_capital);
  EXPECT_FALSE(first[1].capitalized);
  const auto proper = match_glossary("Qt rocks", use, {});  // the entry itself is capitalised
  ASSERT_EQ(proper.size(), 1u);
  EXPECT_FALSE(proper[0].initial_capital);
  EXPECT_EQ(capitalize_first("ärger"), "Ärger");
  EXPECT_EQ(count_term("Konfiguration and konfiguration", "konfiguration", true), 2);
  EXPECT_EQ(count_term("x Konfiguration", "konfiguration", true), 1);
  EXPECT_EQ(count_term("x Konfiguration", "konfiguration", false), 0);
  const auto title = match_glossary("Open Settings", use, {});  // title case: a capital
  ASSERT_EQ(title.size(), 1u);
  EXPECT_TRUE(title[0].capitalized);
  EXPECT_FALSE(title[0].initial_capital);
}

TEST(GlossaryRefusalTest, EveryBadEntryIsNamed) {
  EXPECT_EQ(refusal({{"a", "b"}, {"", "x"}}), "glossary[1]: the source term is empty");
  EXPECT_EQ(refusal({{"a", ""}}), "glossary[0]: the target term is empty");
  EXPECT_EQ(refusal({{" \t", "x"}}), "glossary[0]: the source term is blank");
  EXPECT_EQ(refusal({{"ok", "\xff"}}), "glossary[0]: the target term is not valid UTF-8");
  EXPECT_EQ(refusal({{"File", "Akte"}, {"file", "Datei"}}),
            "glossary[1]: source \"file\" is listed before with target \"Akte\", here with "
            "\"Datei\"");
  EXPECT_NE(refusal({{"%s", "x"}}).find("holds a protected span (%s)"), std::string::npos);
  EXPECT_NE(refusal({{std::string(300, 'a'), "x"}}).find("over the limit of 256"),
            std::string::npos);
  EXPECT_EQ(refusal({{"a", "b"}, {"c", "d"}}, 1), "glossary has 2 entries, over the limit of 1");
  EXPECT_EQ(refusal({{"File", "Akte"}, {"file", "Akte"}}), "accepted");
  EXPECT_EQ(make({{"File", "Akte"}, {"file", "Akte"}}).size(), 1);
  EXPECT_THROW(parse_glossary_method("exact"), InvalidArgument);
}

TEST(GlossaryRefusalTest, FilesNameTheLine) {
  const auto path = std::filesystem::temp_directory_path() / "rpt_glossary_test.tsv";
  const auto write = [&](const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
    try {
      return std::to_string(Glossary::load(path.string()).size());
    } catch (const InvalidArgument& e) {
      return e.message().substr(path.string().size());
    }
  };
  EXPECT_EQ(write("# terms\n\nfile\tDatei\r\nsettings\tEinstellungen\n"), "2");
  EXPECT_EQ(write("file\tDatei\nno tab here\n"),
            ":2: expected \"source<TAB>target\", found no tab");
  EXPECT_EQ(write("a\tb\tc\n"), ":1: expected \"source<TAB>target\", found more than one tab");
  EXPECT_EQ(write("# x\nfile\tDatei\nFILE\tAkte\n"),
            ":3: source \"FILE\" is listed before with target \"Datei\", here with \"Akte\"");
  EXPECT_EQ(write("x\t\n"), ":1: the target term is empty");
  std::filesystem::remove(path);
  EXPECT_THROW(Glossary::load(path.string()), InvalidArgument);
}

TEST(GlossaryRefusalTest, IdentityFollowsTheEntries) {
  const Glossary a = make({{"file", "Datei"}});
  const Glossary b = make({{"file", "Datei"}});
  const Glossary c = make({{"file", "Akte"}});
  const Glossary d = make({{"fil", "eDatei"}});
  EXPECT_EQ(a.identity(), b.identity());
  EXPECT_NE(a.identity(), c.identity());
  EXPECT_NE(a.identity(), d.identity());
  EXPECT_NE((GlossaryUse{{&a}, GlossaryMethod::kMask}).identity(),
            (GlossaryUse{{&a}, GlossaryMethod::kPhrase}).identity());
  EXPECT_EQ(GlossaryUse{}.identity(), "");
}

class GlossaryTranslationTest : public ::testing::TestWithParam<GlossaryMethod> {
 protected:
  static void SetUpTestSuite() {
    const auto directory = std::filesystem::path(testing::source_dir()) / "models" / "en-de";
    translator_ = new Translator(Model::load(directory.string()), {.max_batch_size = 8});
  }
  static void TearDownTestSuite() {
    delete translator_;
    translator_ = nullptr;
  }
  std::vector<TranslationResult> translate(const std::vector<std::string>& texts,
                                           const Glossary& glossary,
                                           DecodingOptions options = {}) const {
    return translator_->translate(texts, options, {}, GlossaryUse{{&glossary}, GetParam()});
  }
  static int count(const std::string& text, const std::string& what) {
    return count_term(text, what, false);
  }
  static inline Translator* translator_ = nullptr;
};

TEST_P(GlossaryTranslationTest, CounterfactualTargetsAppearAsOftenAsTheirSources) {
  // Renderings the model would not choose: the output follows the glossary.
  const Glossary g = make({{"file", "Akte"}, {"settings", "Konfiguration"}});
  const auto results =
      translate({"The file could not be opened.", "Open the settings and save the file.",
                 "Copy the file to the file server."},
                g);
  const int expected_akte[] = {1, 1, 2};
  const int expected_konfiguration[] = {0, 1, 0};
  for (std::size_t i = 0; i < results.size(); ++i) {
    const TranslationHypothesis& best = results[i].hypotheses.at(0);
    EXPECT_EQ(count(best.text, "Akte"), expected_akte[i]) << best.text;
    EXPECT_EQ(count(best.text, "Konfiguration"), expected_konfiguration[i]) << best.text;
    EXPECT_TRUE(best.terms_kept) << best.text;
    for (const GlossaryTermResult& term : results[i].glossary_terms) EXPECT_TRUE(term.kept);
  }
  ASSERT_EQ(results[2].glossary_terms.size(), 1u);
  EXPECT_EQ(results[2].glossary_terms[0].source, "file");
  EXPECT_EQ(results[2].glossary_terms[0].target, "Akte");
  EXPECT_EQ(results[2].glossary_terms[0].matches, 2);
  EXPECT_EQ(results[1].glossary_terms.size(), 2u);
  EXPECT_TRUE(results[1].glossary_terms[0].source == "settings");  // first match first
}

TEST_P(GlossaryTranslationTest, OneOccurrenceCountsOnceWhateverItsCase) {
  // "Image" (title case: the target may take a capital) and "image", and a second entry with
  // the same target: three occurrences of one target text, each written.
  const Glossary g = make({{"image", "bildchen"}, {"picture", "bildchen"}});
  const auto result = translate({"Image editor: open the image or the picture."}, g);
  const TranslationHypothesis& best = result[0].hypotheses.at(0);
  EXPECT_EQ(count_term(best.text, "bildchen", true), 3) << best.text;
  EXPECT_TRUE(best.terms_kept) << best.text;
}

TEST_P(GlossaryTranslationTest, MultiWordMultiPieceAndDoNotTranslate) {
  const Glossary g = make({{"file server", "Dateiablageserver"},
                           {"Nautilus", "Nautilus"},
                           {"print queue", "Druckwarteschlange für Aufträge"}});
  const auto result = translate({"Nautilus cannot reach the file server or the print queue."}, g);
  const std::string& text = result[0].hypotheses.at(0).text;
  EXPECT_EQ(count(text, "Dateiablageserver"), 1) << text;
  EXPECT_EQ(count(text, "Nautilus"), 1) << text;
  EXPECT_EQ(count(text, "Druckwarteschlange für Aufträge"), 1) << text;
  EXPECT_TRUE(result[0].hypotheses[0].terms_kept);
  // Multi-piece: the target is more than one piece of the model's vocabulary.
  EXPECT_GT(translator_->model().target_tokenizer().encode("Dateiablageserver").size(), 1u);
}

TEST_P(GlossaryTranslationTest, SpansAndTermsTogether) {
  const Glossary g = make({{"file", "Akte"}});
  const auto result = translate({"The file %s was saved in <b>file</b> format."}, g);
  const TranslationHypothesis& best = result[0].hypotheses.at(0);
  EXPECT_EQ(count(best.text, "Akte"), 2) << best.text;
  EXPECT_EQ(count(best.text, "%s"), 1) << best.text;
  EXPECT_EQ(count(best.text, "<b>"), 1) << best.text;
  EXPECT_TRUE(best.spans_kept);
  EXPECT_TRUE(best.terms_kept);
}

TEST_P(GlossaryTranslationTest, BatchInvariant) {
  const Glossary g = make({{"file", "Akte"}, {"folder", "Mappe"}});
  const std::vector<std::string> texts = {"Delete the folder?", "The file is read-only.",
                                          "Move the file into the folder.", "Quit"};
  const auto together = translate(texts, g);
  for (std::size_t i = 0; i < texts.size(); ++i) {
    const auto alone = translate({texts[i]}, g);
    EXPECT_EQ(alone[0].hypotheses[0].ids, together[i].hypotheses[0].ids) << texts[i];
  }
  EXPECT_TRUE(together[3].glossary_terms.empty());
}

TEST_P(GlossaryTranslationTest, NoRoomSaysSoAndNeverTruncatesToNothing) {
  const Glossary g = make({{"file", "Dateiablageserverkomponente"}});
  DecodingOptions options;
  options.max_length = 1;
  const auto result = translate({"Open the file and the file."}, g, options);
  const TranslationHypothesis& best = result[0].hypotheses.at(0);
  EXPECT_FALSE(best.text.empty());
  EXPECT_FALSE(best.terms_kept);
  EXPECT_FALSE(result[0].glossary_terms.at(0).kept);
}

INSTANTIATE_TEST_SUITE_P(Methods, GlossaryTranslationTest,
                         ::testing::Values(GlossaryMethod::kMask, GlossaryMethod::kPhrase),
                         [](const auto& method) { return glossary_method_name(method.param); });

TEST(GlossaryModelTest, TargetsTheVocabularyCannotWriteAreRefused) {
  // The fixture's toy vocabulary has no byte pieces: a character it lacks cannot be written.
  const Translator fixture(Model::load(
      (std::filesystem::path(testing::source_dir()) / "tests/fixtures/shaw_k4/model").string()));
  const Glossary ok = make({{"file", "set"}});
  EXPECT_NO_THROW(fixture.span_protector().check_glossary(ok, "glossary"));
  const Glossary bad = make({{"file", "set"}, {"cat", "猫"}});
  try {
    fixture.span_protector().check_glossary(bad, "glossary");
    FAIL() << "accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(e.message().find("glossary[1]: the target \"猫\" cannot be written"),
              std::string::npos)
        << e.message();
  }
  // The bundled models fall back to byte pieces: they write any text.
  const Translator bundled(
      Model::load((std::filesystem::path(testing::source_dir()) / "models" / "en-de").string()));
  EXPECT_NO_THROW(bundled.span_protector().check_glossary(bad, "glossary"));
}

}  // namespace
}  // namespace rpt
