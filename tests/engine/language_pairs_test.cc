// A model's language pairs (engine/language_pair.h, config.json's language_pairs): parsing and
// refusals, matching a query, the prefix each pair's sources are read after, and input limits
// that count the text's own ids only.
#include "engine/language_pair.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <nlohmann/json.hpp>

#include "engine/errors.h"
#include "engine/text_segments.h"
#include "engine/translator.h"
#include "tests/support/source_dir.h"
#include "tests/support/weights_writer.h"

namespace rpt {
namespace {

std::string fixture_config() {
  std::ifstream in(testing::source_dir() + "/tests/fixtures/t5_bucket/model/config.json");
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The fixture's config.json with `change` applied to its JSON.
std::string changed_config(const std::function<void(nlohmann::json&)>& change) {
  nlohmann::json config = nlohmann::json::parse(fixture_config());
  change(config);
  return config.dump();
}

const nlohmann::json kT5Pairs = nlohmann::json::array(
    {{{"source", "en"}, {"target", "de"}, {"prefix", "translate English to German: "}},
     {{"source", "en"}, {"target", "fr"}, {"prefix", "translate English to French: "}},
     {{"source", "*"}, {"target", "ro"}, {"prefix", "<2ro> "}}});

TEST(LanguagePairsConfig, WithoutTheKeyTheTopLevelLanguagesAreTheOnePair) {
  const ModelConfig plain = ModelConfig::parse(fixture_config(), "plain");
  ASSERT_EQ(plain.language_pairs.size(), 1u);
  EXPECT_EQ(plain.language_pairs[0].name(), "en->de");
  EXPECT_EQ(plain.language_pairs[0].prefix, "");
  const ModelConfig prefixed = ModelConfig::parse(
      changed_config([](nlohmann::json& c) { c["source_prefix"] = "translate: "; }), "prefixed");
  ASSERT_EQ(prefixed.language_pairs.size(), 1u);
  EXPECT_EQ(prefixed.language_pairs[0].prefix, "translate: ");
  EXPECT_EQ(prefixed.source_prefix, "translate: ");
}

TEST(LanguagePairsConfig, ReadsEveryPairAndTheFirstIsTheDefault) {
  const ModelConfig config = ModelConfig::parse(changed_config([](nlohmann::json& c) {
                                                  c.erase("target_language");
                                                  c["language_pairs"] = kT5Pairs;
                                                }),
                                                "t5");
  ASSERT_EQ(config.language_pairs.size(), 3u);
  EXPECT_EQ(config.language_pairs[1].name(), "en->fr");
  EXPECT_EQ(config.language_pairs[1].prefix, "translate English to French: ");
  EXPECT_TRUE(config.language_pairs[2].reads_any_source());
  EXPECT_FALSE(config.language_pairs[0].reads_any_source());
  EXPECT_EQ(config.source_language, "en");
  EXPECT_EQ(config.target_language, "de");
  EXPECT_EQ(config.source_prefix, "translate English to German: ");
}

TEST(LanguagePairsConfig, RefusesBadPairsNamingTheFileAndThePair) {
  const auto pairs = [](nlohmann::json list) {
    return [list](nlohmann::json& c) { c["language_pairs"] = list; };
  };
  const nlohmann::json en_de = {{"source", "en"}, {"target", "de"}};
  const std::vector<std::pair<std::function<void(nlohmann::json&)>, std::string>> bad = {
      {pairs(nlohmann::json::array()), "language_pairs is empty"},
      {pairs(nlohmann::json::object()), "must be a list"},
      {pairs({"en-de"}), "must be {"},
      {pairs({{{"source", "en"}}}), "language_pairs[0] needs a target"},
      {pairs({{{"source", "en"}, {"target", "*"}}}), "language_pairs[0] needs a target"},
      {pairs({{{"target", "de"}}}), "language_pairs[0] has no source"},
      {pairs({en_de, {{"source", "en"}, {"target", "fr"}}, en_de}),
       "language_pairs[2] repeats en->de (language_pairs[0])"},
      {pairs({{{"source", "en"}, {"target", "de"}, {"prefx", "x"}}}), "unknown key 'prefx'"},
      {pairs({{{"source", "en"}, {"target", "de"}, {"prefix", 3}}}), "malformed"},
      {[](nlohmann::json& c) {
         c["language_pairs"] = {{{"source", "en"}, {"target", "de"}}};
         c["source_prefix"] = "translate: ";
       },
       "source_prefix goes without language_pairs"},
      // The top-level languages name the first pair.
      {pairs({{{"source", "en"}, {"target", "fr"}}, en_de}),
       "target_language 'de' is not language_pairs[0]'s ('fr')"},
  };
  for (const auto& [change, expected] : bad) {
    try {
      ModelConfig::parse(changed_config(change), "dir/config.json");
      ADD_FAILURE() << "accepted a config that should say: " << expected;
    } catch (const ModelError& error) {
      EXPECT_NE(error.message().find("dir/config.json"), std::string::npos) << error.message();
      EXPECT_NE(error.message().find(expected), std::string::npos) << error.message();
    }
  }
}

TEST(LanguagePairMatching, ASourceOfItsOwnWinsOverAnySourceAndEmptyFieldsMatchAll) {
  const std::vector<LanguagePair> pairs = {
      {"en", "de", "a"}, {"en", "fr", "b"}, {"*", "de", "c"}, {"*", "ro", "d"}};
  using Found = std::vector<std::size_t>;
  EXPECT_EQ(matching_pairs(pairs, {"en", "de"}), (Found{0}));
  EXPECT_EQ(matching_pairs(pairs, {"fr", "de"}), (Found{2}));
  EXPECT_EQ(matching_pairs(pairs, {"fr", "ro"}), (Found{3}));
  EXPECT_EQ(matching_pairs(pairs, {"", "de"}), (Found{0, 2}));
  EXPECT_EQ(matching_pairs(pairs, {"en", ""}), (Found{0, 1}));
  EXPECT_EQ(matching_pairs(pairs, {"", ""}), (Found{0, 1, 2, 3}));
  EXPECT_TRUE(matching_pairs(pairs, {"en", "ro"}).size() == 1);
  EXPECT_TRUE(matching_pairs(pairs, {"en", "it"}).empty());
  EXPECT_EQ(match_pair(pairs[0], {"fr", "de"}), PairMatch::kNone);
  EXPECT_EQ(match_pair(pairs[2], {"fr", "de"}), PairMatch::kAnySource);

  EXPECT_EQ(pick_language_pair(pairs, {"en", "fr"}), 1u);
  EXPECT_EQ(pick_language_pair(pairs, {"", "ro"}), 3u);
  try {
    pick_language_pair(pairs, {"en", ""});
    ADD_FAILURE() << "picked a pair without a target";
  } catch (const InvalidArgument& error) {
    EXPECT_NE(error.message().find("name the target language (one of de, fr)"), std::string::npos)
        << error.message();
  }
  try {
    pick_language_pair(pairs, {"", "de"});
    ADD_FAILURE() << "picked a pair without a source";
  } catch (const InvalidArgument& error) {
    EXPECT_NE(error.message().find("name the source language (one of en, *)"), std::string::npos)
        << error.message();
  }
  try {
    pick_language_pair(pairs, {"en", "it"});
    ADD_FAILURE() << "picked a pair that is not there";
  } catch (const InvalidArgument& error) {
    EXPECT_NE(error.message().find("does not translate en->it"), std::string::npos)
        << error.message();
  }
}

// A synthetic model (whitespace tokens w4..w59) with three pairs: no prefix, "w7 w8", "w30".
class LanguagePairsModelTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    directory_ = testing::make_temp_directory("rpt-language-pairs");
    options_ = testing::relative_model_options(
        {.encoder_layers = 1, .decoder_layers = 1, .d_model = 16, .heads = 2, .d_ff = 32}, 4);
    options_.vocabulary_size = 60;
    options_.config.append_source_eos = true;
    options_.config.language_pairs = {{"en", "de", ""}, {"en", "fr", "w7 w8"}, {"*", "ro", "w30"}};
    testing::write_synthetic_model(directory_, options_);
    model_ = Model::load(directory_, {.max_sequence_length = 64});
  }
  static void TearDownTestSuite() {
    model_.reset();
    std::filesystem::remove_all(directory_);
  }

  static inline std::string directory_;
  static inline testing::SyntheticModelOptions options_;
  static inline std::shared_ptr<const Model> model_;
};

TEST_F(LanguagePairsModelTest, EachPairsSourcesStartWithItsPrefix) {
  const Model& model = *model_;
  ASSERT_EQ(model.language_pairs().size(), 3u);
  EXPECT_EQ(model.source_prefix_ids(0), std::vector<int>{});
  EXPECT_EQ(model.source_prefix_ids(1), (std::vector<int>{7, 8}));
  EXPECT_EQ(model.source_prefix_ids(2), std::vector<int>{30});
  EXPECT_THROW(model.source_prefix_ids(3), InvalidArgument);
  EXPECT_EQ(model.max_added_source_ids(), 3) << "the longest prefix and the eos";
  const int eos = model.source_vocabulary().to_id("</s>");
  const std::vector<std::vector<int>> expected = {{5, 9, eos}, {7, 8, 5, 9, eos}, {30, 5, 9, eos}};
  for (std::size_t pair = 0; pair < 3; ++pair) {
    const PreparedSource prepared = prepare_source(model, "w5 w9", {.language_pair = pair});
    EXPECT_EQ(prepared.ids, expected[pair]) << "pair " << pair;
    EXPECT_EQ(prepared.text_ids(), 2) << "pair " << pair;
    // A segment the model reads nothing of stays empty, never a lone prefix.
    EXPECT_TRUE(prepare_source(model, " ", {.language_pair = pair}).ids.empty());
  }
  EXPECT_THROW(prepare_source(model, "w5", {.language_pair = 3}), InvalidArgument);
}

TEST_F(LanguagePairsModelTest, TheTranslatorTranslatesInItsPairAndTheOutputsDiffer) {
  const DecodingOptions greedy{.beam_size = 1, .max_length = 6};
  std::vector<TranslationResult> results;
  for (std::size_t pair = 0; pair < 3; ++pair) {
    const Translator translator(model_, {.max_input_length = 32, .language_pair = pair});
    const TranslationResult result = translator.translate({"w5 w9 w11"}, greedy)[0];
    // Exactly what the model gives for the prefixed ids.
    const std::vector<int> ids = prepare_source(*model_, "w5 w9 w11", {.language_pair = pair}).ids;
    const auto direct = translator.translate_ids({ids}, greedy)[0];
    EXPECT_EQ(result.hypotheses[0].ids, direct[0].ids) << "pair " << pair;
    EXPECT_EQ(result.hypotheses[0].score, direct[0].score) << "pair " << pair;
    EXPECT_EQ(result.source_tokens, static_cast<int>(ids.size()));
    results.push_back(result);
  }
  EXPECT_NE(results[0].hypotheses[0].score, results[1].hypotheses[0].score);
  EXPECT_NE(results[1].hypotheses[0].score, results[2].hypotheses[0].score);
  EXPECT_THROW(Translator(model_, {.max_input_length = 32, .language_pair = 3}), InvalidArgument);
}

TEST_F(LanguagePairsModelTest, InputLimitsCountTheTextsOwnIdsOnly) {
  // Five ids of text: within a limit of five whatever the pair adds (up to two and the eos).
  const std::string five = "w5 w6 w7 w8 w9";
  for (std::size_t pair = 0; pair < 3; ++pair) {
    const Translator fits(model_, {.max_input_length = 5, .language_pair = pair});
    EXPECT_EQ(fits.prepare(five, 0, {}).text_ids(), 5);
    const Translator short_limit(model_, {.max_input_length = 4, .language_pair = pair});
    EXPECT_THROW(short_limit.prepare(five, 0, {}), InvalidArgument);
    // A segment is cut by its own ids too: five fit in one, six do not.
    documents::SegmentationOptions whole;
    whole.split = documents::SplitSentences::kNone;
    documents::SegmentedText text = documents::segment_text(five, whole);
    EXPECT_EQ(fits.prepare_segments(text, 0, {}, {}).size(), 1u);
    documents::SegmentedText longer = documents::segment_text(five + " w10", whole);
    EXPECT_GE(fits.prepare_segments(longer, 0, {}, {}).size(), 2u);
  }
  // The whole source still fits the model: the limit leaves room for the longest prefix and eos.
  EXPECT_NO_THROW(Translator(model_, {.max_input_length = 64 - 3}));
  EXPECT_THROW(Translator(model_, {.max_input_length = 64 - 2}), InvalidArgument);
}

TEST_F(LanguagePairsModelTest, APrefixTheModelCannotReadOrHoldIsRefusedAtLoad) {
  const std::string directory = testing::make_temp_directory("rpt-language-pairs-unknown");
  testing::SyntheticModelOptions options = options_;
  options.config.language_pairs = {{"*", "de", "<2de>"}};
  testing::write_synthetic_model(directory, options);
  try {
    Model::load(directory);
    ADD_FAILURE() << "loaded a prefix of unknown pieces";
  } catch (const ModelError& error) {
    EXPECT_NE(error.message().find("config.json: the prefix '<2de>' of language pair *->de"),
              std::string::npos)
        << error.message();
  }
  std::filesystem::remove_all(directory);
  // Nor one that leaves no room for text: "w7 w8" and the eos fill 3 ids.
  EXPECT_THROW(Model::load(directory_, {.max_sequence_length = 3}), ModelError);
  EXPECT_NO_THROW(Model::load(directory_, {.max_sequence_length = 4}));
}

// On the bundled en-de model: the prefix is added after span protection rewrote the text, so
// spans are looked for, masked and restored in the text alone.
TEST(LanguagePairsSpans, TheyAreProtectedInTheTextAndThePrefixComesFirst) {
  const std::string bundled = testing::source_dir() + "/models/en-de";
  const std::string directory = testing::make_temp_directory("rpt-language-pairs-spans");
  for (const auto& entry : std::filesystem::directory_iterator(bundled)) {
    if (entry.path().filename() != "config.json") {
      std::filesystem::create_symlink(entry.path(),
                                      std::filesystem::path(directory) / entry.path().filename());
    }
  }
  nlohmann::json config = nlohmann::json::parse(std::ifstream(bundled + "/config.json"));
  config["language_pairs"] = {{{"source", "en"}, {"target", "de"}},
                              {{"source", "en"}, {"target", "fr"}, {"prefix", "Good morning."}}};
  std::ofstream(std::filesystem::path(directory) / "config.json") << config.dump();
  const auto model = Model::load(directory);
  const SpanProtector protector(model);
  const std::string source = "Save %s to {0}";
  const PreparedSource plain =
      prepare_source(*model, source, {.language_pair = 0, .protector = &protector});
  const PreparedSource prefixed =
      prepare_source(*model, source, {.language_pair = 1, .protector = &protector});
  const std::vector<int>& prefix = model->source_prefix_ids(1);
  ASSERT_FALSE(prefix.empty());
  ASSERT_TRUE(plain.spans && prefixed.spans);
  EXPECT_EQ(prefixed.spans->text, plain.spans->text);
  EXPECT_EQ(prefixed.spans->spans, 2);
  std::vector<int> expected = prefix;
  expected.insert(expected.end(), plain.ids.begin(), plain.ids.end());
  EXPECT_EQ(prefixed.ids, expected);
  EXPECT_EQ(prefixed.text_ids(), static_cast<int>(plain.ids.size()));
  // Translated in the prefixed pair, the spans come back.
  const Translator translator(model, {.language_pair = 1});
  const TranslationResult result = translator.translate({source}, {.beam_size = 2})[0];
  EXPECT_TRUE(result.hypotheses[0].spans_kept) << result.hypotheses[0].text;
  EXPECT_EQ(result.protected_spans, 2);
  std::filesystem::remove_all(directory);
}

}  // namespace
}  // namespace rpt
