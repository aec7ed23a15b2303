// Span protection on the bundled en-fr model (models/en-fr, whose vocabulary holds placeholder
// symbols): masking, restoration, bans, accelerators, and whole translations that keep every
// span where the unconstrained model drops one. Malformed input never fails.
#include "engine/span_protection.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "engine/translator.h"
#include "tests/support/source_dir.h"

namespace rpt {
namespace {

class SpanProtectionTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const auto directory = std::filesystem::path(testing::source_dir()) / "models" / "en-fr";
    translator_ = new Translator(Model::load(directory.string()), {.max_batch_size = 16});
  }
  static void TearDownTestSuite() {
    delete translator_;
    translator_ = nullptr;
  }
  static const SpanProtector& protector() { return translator_->span_protector(); }
  static int target_id(const std::string& piece) {
    return translator_->model().target_vocabulary().to_id(piece);
  }
  static std::string translate(const std::string& text, const SpanProtectionOptions& spans = {},
                               bool* kept = nullptr) {
    const auto result = translator_->translate({text}, DecodingOptions{}, spans).at(0);
    if (kept) *kept = result.hypotheses.at(0).spans_kept;
    return result.hypotheses.at(0).text;
  }
  static int count(const std::string& text, const std::string& what) {
    int n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  }

  static inline Translator* translator_ = nullptr;
};

TEST_F(SpanProtectionTest, OnePieceSpansStayAndAreRequired) {
  const ProtectedSource p = protector().protect("Save the file as %s", {});
  EXPECT_EQ(p.text, "Save the file as %s");
  EXPECT_TRUE(p.masks.empty());
  ASSERT_TRUE(p.constraints);
  ASSERT_EQ(p.constraints->required(), 1);
  EXPECT_EQ(p.constraints->phrases()[0].ids, std::vector<int>{target_id("%s")});
  EXPECT_EQ(p.constraints->phrases()[0].count, 1);
}

TEST_F(SpanProtectionTest, OtherSpansAreMaskedAndRestored) {
  const ProtectedSource p = protector().protect("Delete {count} items?", {});
  ASSERT_EQ(p.masks.size(), 1u);
  EXPECT_EQ(p.masks[0].original, "{count}");
  EXPECT_EQ(p.text.find("{count}"), std::string::npos) << p.text;
  const std::string sentinel =
      translator_->model().target_vocabulary().to_token(p.masks[0].target_id);
  EXPECT_NE(p.text.find(sentinel), std::string::npos) << p.text;
  // A translation with the sentinel gets the original back, and counts as keeping it.
  const auto& vocabulary = translator_->model().target_vocabulary();
  std::vector<int> ids = {vocabulary.to_id("▁Supprimer"), target_id("▁"), p.masks[0].target_id};
  const RestoredTranslation restored = protector().restore(p, ids);
  EXPECT_EQ(restored.text, "Supprimer {count}");
  EXPECT_TRUE(restored.spans_kept);
  ids.pop_back();
  EXPECT_FALSE(protector().restore(p, ids).spans_kept);
}

TEST_F(SpanProtectionTest, PairedTagsAreMaskedAsAPairInOrder) {
  const ProtectedSource p = protector().protect("Click <a href=\"x\">here</a> now", {});
  ASSERT_EQ(p.masks.size(), 2u);
  EXPECT_EQ(p.masks[0].original, "<a href=\"x\">");
  EXPECT_EQ(p.masks[1].original, "</a>");
  const auto& phrases = p.constraints->phrases();
  const auto closing = std::find_if(phrases.begin(), phrases.end(), [&](const auto& c) {
    return c.ids == std::vector<int>{p.masks[1].target_id};
  });
  ASSERT_NE(closing, phrases.end());
  ASSERT_GE(closing->opener, 0);
  EXPECT_EQ(phrases[static_cast<std::size_t>(closing->opener)].ids,
            std::vector<int>{p.masks[0].target_id});
}

// A tag that encloses nothing (an HTML unit's <x id="1"/> for <code>, an <img/>) was masked by
// <b>, and the model wrote a word after it: "Utiliser l'option <x id="1"/>L pour voir plus.",
// "Cliquez sur <img src="a.png"/>Cliquer pour ouvrir.". Its sentinel stands alone too.
TEST_F(SpanProtectionTest, ATagThatEnclosesNothingIsMaskedByOneThatEnclosesNothing) {
  for (const std::string tag : {"<x id=\"1\"/>", "<img src=\"a.png\"/>"}) {
    const ProtectedSource p = protector().protect("Use the " + tag + " option to see more.", {});
    ASSERT_EQ(p.masks.size(), 1u) << tag;
    const std::string& sentinel =
        translator_->model().target_vocabulary().to_token(p.masks[0].target_id);
    EXPECT_TRUE(sentinel.ends_with("/>") || sentinel == "<br>" ||
                sentinel.find('<') == std::string::npos)
        << tag << " masked by " << sentinel;
    bool kept = false;
    const std::string translation = translate("Use the " + tag + " option to see more.", {}, &kept);
    EXPECT_TRUE(kept) << translation;
    const std::size_t at = translation.find(tag);
    ASSERT_NE(at, std::string::npos) << translation;
    ASSERT_LT(at + tag.size(), translation.size()) << translation;
    EXPECT_FALSE(std::isalpha(static_cast<unsigned char>(translation[at + tag.size()])))
        << translation;
  }
}

TEST_F(SpanProtectionTest, PlaceholdersTheSourceLacksAreBanned) {
  const ProtectedSource p = protector().protect("Open the file", {});
  ASSERT_TRUE(p.constraints);  // bans only: nothing required
  EXPECT_EQ(p.constraints->required(), 0);
  const ConstraintState state = p.constraints->initial_state();
  EXPECT_FALSE(p.constraints->allows(state, target_id("%s")));
  EXPECT_FALSE(p.constraints->allows(state, target_id("<b>")));
  EXPECT_TRUE(p.constraints->allows(state, target_id("▁fichier")));
  // What the source has stays allowed.
  const ProtectedSource q = protector().protect("Open %s", {});
  EXPECT_TRUE(q.constraints->allows(q.constraints->initial_state(), target_id("%s")));
  EXPECT_FALSE(q.constraints->allows(q.constraints->initial_state(), target_id("%d")));
}

TEST_F(SpanProtectionTest, OffMeansNoConstraintAndTheTextAsItIs) {
  const ProtectedSource p = protector().protect("Delete {count} items?", {.enabled = false});
  EXPECT_EQ(p.text, "Delete {count} items?");
  EXPECT_FALSE(p.constraints);
}

TEST_F(SpanProtectionTest, AcceleratorMarkerMovesOntoTheTranslation) {
  const ProtectedSource p = protector().protect("&Open File", {});
  EXPECT_EQ(p.text, "Open File");
  EXPECT_EQ(p.accelerator_marker, "&");
  bool kept = false;
  const std::string out = translate("&Open File", {}, &kept);
  EXPECT_EQ(count(out, "&"), 1) << out;
  EXPECT_TRUE(kept) << out;
  EXPECT_EQ(count(translate("&Open File", {.accelerators = false}), "&"), 0);
}

TEST_F(SpanProtectionTest, KeepsWhatTheUnconstrainedModelDrops) {
  // The bundled model drops "column %d" here (measured; see docs/MODELS.md).
  const std::string source = "Reading module %qs at line %d column %d: %s";
  const std::string free = translate(source, {.enabled = false});
  ASSERT_LT(count(free, "%d"), 2) << "the model now keeps both %d: pick another example";
  bool kept = false;
  const std::string out = translate(source, {}, &kept);
  EXPECT_EQ(count(out, "%d"), 2) << out;
  EXPECT_EQ(count(out, "%qs"), 1) << out;
  EXPECT_EQ(count(out, "%s"), 1) << out;
  EXPECT_TRUE(kept);
}

// Addresses were read as words: "See example.com/a.b ..." came back as "Voir par
// exemple.com/a.b ..." (en-de: "Nach Beispiel.com/a.b ..."), an e-mail address as "l'utilisateur.
// Le nom de l'utilisateur". Masked, each comes back byte for byte.
TEST_F(SpanProtectionTest, AddressesComeBackAsTheyWere) {
  for (const std::string address :
       {"example.com/a.b", "www.example.org", "user.name@example.com", "https://example.com/a/b"}) {
    const std::string source = "See " + address + " for the details.";
    const ProtectedSource p = protector().protect(source, {});
    EXPECT_EQ(p.spans, 1) << source;
    EXPECT_EQ(p.text.find(address), std::string::npos) << p.text;  // the model never reads it
    bool kept = false;
    const std::string translation = translate(source, {}, &kept);
    EXPECT_TRUE(kept) << translation;
    EXPECT_EQ(count(translation, address), 1) << translation;
  }
}

// What the model can neither read nor write came back as other bytes: a word in another script
// ("(עברית)" as "(‒ ‥אאאא)", "文件" dropped for an invented "→"), a currency sign ("€5" as
// broken UTF-8, "£10 or ¥100" as "©10 oder ©100"), inline code ("`make install`" as
// "»make«"), numbers. Each is a span now and comes back byte for byte, exactly as often.
TEST_F(SpanProtectionTest, ForeignWordsCurrencyCodeAndNumbersComeBackAsTheyWere) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"Open the file (\u05E2\u05D1\u05E8\u05D9\u05EA) now.", {"\u05E2\u05D1\u05E8\u05D9\u05EA"}},
      {"Open \u6587\u4EF6 now.", {"\u6587\u4EF6"}},
      {"\u20AC5 is the price.", {"\u20AC"}},
      {"Costs \u00A310 or \u00A5100.", {"\u00A3", "\u00A5"}},
      {"Run `make install` now.", {"`make install`"}},
      // Numbers: this model wrote "23:59:59" as "23 :59 :59", "3 March 2024" as "3 March 24".
      {"The meeting is on 2024-01-03 at 10:30.", {"2024-01-03", "10:30"}},
      {"The backup started at 23:59:59.", {"23:59:59"}},
      {"Released 3 March 2024.", {"2024"}},
  };
  for (const auto& [source, kept_items] : cases) {
    bool kept = false;
    const std::string translation = translate(source, {}, &kept);
    EXPECT_TRUE(kept) << source << " -> " << translation;
    for (const std::string& item : kept_items) {
      EXPECT_EQ(count(translation, item), 1) << source << " -> " << translation;
    }
    EXPECT_EQ(translation.find("\uFFFD"), std::string::npos) << translation;
  }
  // Words the model writes are its own: English, accented Latin letters.
  EXPECT_TRUE(protector().protect("Open the caf\u00E9 menu", {}).words.empty());
  const ProtectedSource hebrew = protector().protect("Open \u05E2\u05D1\u05E8\u05D9\u05EA", {});
  EXPECT_EQ(hebrew.words, std::vector<std::string>{"\u05E2\u05D1\u05E8\u05D9\u05EA"});
  EXPECT_EQ(hebrew.spans, 1);
}

// Spans with nothing between them are masked as one: the model read "%1%d" as one placeholder,
// copied the first, and the search put the other at the end ("Price : € par élément.%d").
TEST_F(SpanProtectionTest, TouchingSpansAreMaskedAsOneAndComeBackTogether) {
  const ProtectedSource p = protector().protect("Value {name}{unit} saved.", {});
  ASSERT_EQ(p.masks.size(), 1u);
  EXPECT_EQ(p.masks[0].original, "{name}{unit}");
  EXPECT_EQ(p.expected, (std::vector<std::string>{"{name}", "{unit}"}));
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"Price: \u20AC%d per item.", "\u20AC%d"},
      {"It costs %1%2 per year.", "%1%2"},
      {"Value {name}{unit} saved.", "{name}{unit}"},
      {"Size %dx%d pixels.", "%dx%d"},
      {"Hello {0}{1} world.", "{0}{1}"},
  };
  for (const auto& [source, run] : cases) {
    bool kept = false;
    const std::string translation = translate(source, {}, &kept);
    EXPECT_TRUE(kept) << source << " -> " << translation;
    EXPECT_EQ(count(translation, run), 1) << source << " -> " << translation;
  }
}

// Markdown's emphasis markers open and close alike: masked by a tag pair, the opening one first
// (the en-de model had turned "Save **all** files now." into "**all*"). ***x*** is two pairs,
// "*" around "**", and comes back whole.
TEST_F(SpanProtectionTest, MarkdownEmphasisIsMaskedByATagPair) {
  const ProtectedSource p = protector().protect("Save **all** files now.", {});
  ASSERT_EQ(p.masks.size(), 2u);
  EXPECT_EQ(p.masks[0].original, "**");
  EXPECT_EQ(p.masks[1].original, "**");
  const auto& vocabulary = translator_->model().target_vocabulary();
  const std::string open = vocabulary.to_token(p.masks[0].target_id);
  const std::string close = vocabulary.to_token(p.masks[1].target_id);
  EXPECT_EQ(close, "</" + open.substr(1)) << p.text;
  EXPECT_EQ(p.text, "Save " + open + "all" + close + " files now.");
  for (const auto& [source, marker] :
       std::vector<std::pair<std::string, std::string>>{{"Save **all** files now.", "**"},
                                                        {"This is *very* important.", "*"},
                                                        {"Open __settings__ first.", "__"},
                                                        {"***Back***", "***"}}) {
    bool kept = false;
    const std::string translation = translate(source, {}, &kept);
    EXPECT_TRUE(kept) << source << " -> " << translation;
    EXPECT_EQ(count(translation, marker), 2) << source << " -> " << translation;
  }
}

TEST_F(SpanProtectionTest, TranslationDoesNotDependOnTheBatch) {
  const std::vector<std::string> sources = {"Reading module %qs at line %d column %d: %s",
                                            "Delete {count} items?",
                                            "Click <a href=\"x\">here</a> now",
                                            "&Open File",
                                            "%1 of %2 files",
                                            "Open the file",
                                            "<b>Warning:</b> %s",
                                            "Value: %.3f%%",
                                            "need %<typename%> before %<%T::%D%>",
                                            "Line one\\nLine two",
                                            "Use $(ARG1) or ${name}",
                                            "Copy &amp; paste"};
  const auto together = translator_->translate(sources, DecodingOptions{});
  for (std::size_t i = 0; i < sources.size(); ++i) {
    const auto alone = translator_->translate({sources[i]}, DecodingOptions{});
    EXPECT_EQ(alone[0].hypotheses[0].text, together[i].hypotheses[0].text) << sources[i];
    EXPECT_TRUE(together[i].hypotheses[0].spans_kept) << together[i].hypotheses[0].text;
  }
}

TEST_F(SpanProtectionTest, MalformedInputTranslatesWithoutError) {
  std::string many;
  for (int i = 0; i < 200; ++i) many += "%s ";
  const std::vector<std::string> sources = {
      "<b>bold without end",
      "50% done",
      "100%",
      "function() { return 0; }",
      "{ \"a\": 1 }",
      "Unbalanced { brace",
      "{count, plural, one {# file {nested}} other {# files}}",
      "</i>closing first<i>",
      "&&",
      "% d",
      many};
  for (const std::string& source : sources) {
    bool kept = false;
    EXPECT_NO_THROW(translate(source, {}, &kept)) << source;
    EXPECT_TRUE(kept) << source << " -> " << translate(source);
  }
  // 200 placeholders with room for only 100 tokens: a translation still comes back, and says
  // it could not keep them.
  DecodingOptions short_output;
  short_output.max_length = 100;
  const auto result = translator_->translate({many}, short_output);
  EXPECT_FALSE(result[0].hypotheses[0].spans_kept);
  EXPECT_EQ(result[0].protected_spans, 200);
}

// The OpenNMT-py fixture model (tests/fixtures/shaw_k4, a toy vocabulary with almost no
// placeholder pieces: {0} and {1} are constrained as phrases of their own pieces).
TEST(SpanProtectionFixture, KeepsTheFieldTheUnconstrainedModelDrops) {
  const Translator translator(Model::load(
      (std::filesystem::path(testing::source_dir()) / "tests/fixtures/shaw_k4/model").string()));
  const std::string source = "Copy {0} to {1}";
  const auto free = translator.translate({source}, DecodingOptions{}, {.enabled = false});
  ASSERT_EQ(free[0].hypotheses[0].text.find("{1}"), std::string::npos)
      << "the fixture now keeps {1}: pick another example";
  const auto kept = translator.translate({source}, DecodingOptions{});
  const std::string& text = kept[0].hypotheses[0].text;
  EXPECT_NE(text.find("{0}"), std::string::npos) << text;
  EXPECT_NE(text.find("{1}"), std::string::npos) << text;
  EXPECT_TRUE(kept[0].hypotheses[0].spans_kept) << text;
}

}  // namespace
}  // namespace rpt
