// engine/text_segments.h: segments' results put back into their text.
#include "engine/text_segments.h"

#include <gtest/gtest.h>

#include "engine/model.h"
#include "engine/span_protection.h"
#include "tests/support/source_dir.h"

namespace rpt {
namespace {

TranslationResult result_of(std::vector<std::string> texts, float score) {
  TranslationResult result;
  for (std::string& text : texts) {
    TranslationHypothesis hypothesis;
    hypothesis.text = std::move(text);
    hypothesis.ids = {1, 2};
    hypothesis.score = score;
    result.hypotheses.push_back(std::move(hypothesis));
  }
  result.source_tokens = 3;
  return result;
}

// Each rank joins the segments' hypotheses of that rank in the layout; a segment with fewer
// gives its last again, whole, at every later rank.
TEST(TextSegments, RanksJoinAndASegmentWithFewerHypothesesRepeatsItsLast) {
  const documents::SegmentedText text = documents::segment_text("  Hello.  World!\n");
  ASSERT_EQ(text.segments.size(), 2u);
  const TranslationResult joined = join_results(
      text, {result_of({"Hallo."}, -1.0f), result_of({"W1!", "W2!", "W3!"}, -2.0f)}, 3);
  ASSERT_EQ(joined.hypotheses.size(), 3u);
  EXPECT_EQ(joined.hypotheses[0].text, "  Hallo.  W1!\n");
  EXPECT_EQ(joined.hypotheses[1].text, "  Hallo.  W2!\n");
  EXPECT_EQ(joined.hypotheses[2].text, "  Hallo.  W3!\n");
  EXPECT_FLOAT_EQ(joined.hypotheses[2].score, -3.0f);
  EXPECT_EQ(joined.hypotheses[0].ids.size(), 4u);
  EXPECT_EQ(joined.source_tokens, 6);
  EXPECT_EQ(joined.segments, 2);
}

TEST(TextSegments, ABlankTextComesBackAsItCame) {
  const documents::SegmentedText text = documents::segment_text(" \r\n\t");
  const TranslationResult joined = join_results(text, {}, 2);
  ASSERT_EQ(joined.hypotheses.size(), 2u);
  EXPECT_EQ(joined.hypotheses[1].text, " \r\n\t");
  EXPECT_EQ(joined.segments, 0);
}

// A script the model's vocabulary lacks reaches it as bytes: such a segment is not sent (it
// stays as it is), while a few foreign letters, accents or emoji in a sentence are.
TEST(TextSegments, TextMostlyInAScriptTheModelCannotReadIsNotSent) {
  const auto model = Model::load(testing::source_dir() + "/models/en-de");
  for (const char* unreadable : {"Привет мир.", "日本語のテキスト。", "Ελληνικά"}) {
    EXPECT_TRUE(prepare_source(*model, unreadable, {}).ids.empty()) << unreadable;
  }
  for (const char* readable :
       {"Save 😀 the file", "Open the Привет file.", "Café crème brûlée", "Open the file."}) {
    EXPECT_FALSE(prepare_source(*model, readable, {}).ids.empty()) << readable;
  }
  // With span protection, whose masks hide words the model cannot write: judged as it came.
  const SpanProtector protector(model);
  EXPECT_TRUE(prepare_source(*model, "Привет мир.", {.protector = &protector}).ids.empty());
  EXPECT_FALSE(
      prepare_source(*model, "Open the Привет file.", {.protector = &protector}).ids.empty());
  // Through a text's segments: kept in the layout, the readable sentence still translated.
  documents::SegmentedText text = documents::segment_text("Привет мир. Open the file.\n");
  const auto prepared = prepare_segments(
      text, {.max_input_length = 64},
      [&](const std::string& segment) { return prepare_source(*model, segment, {}); });
  ASSERT_EQ(prepared.size(), 1u);
  ASSERT_EQ(text.segments.size(), 1u);
  EXPECT_EQ(text.segments[0], "Open the file.");
  EXPECT_EQ(text.separators[0], "Привет мир. ");
}

// A tab or a no-break, thin or ideographic space inside a sentence reaches the model as the space
// it was trained on, not as byte pieces it never saw ("Open&nbsp;the file." came back as
// "Öffne ©-Datei."), with protected spans and without.
TEST(TextSegments, BlanksInsideASegmentAreReadAsSpaces) {
  const auto model = Model::load(testing::source_dir() + "/models/en-de");
  const SpanProtector protector(model);
  for (const SourcePreparation& how :
       {SourcePreparation{}, SourcePreparation{.protector = &protector}}) {
    const std::vector<int> plain = prepare_source(*model, "Open the file %s.", how).ids;
    for (const char* blank : {"\t", "\u00a0", "\u2009", "\u202f", "\u3000"}) {
      const std::string segment = std::string("Open") + blank + "the file %s.";
      EXPECT_EQ(prepare_source(*model, segment, how).ids, plain) << segment;
    }
  }
}

// A segment over what the model translates whole is cut between words, at its list separators
// first, which come back as they were; a word without a blank stays whole unless the model
// cannot read it whole.
TEST(TextSegments, LongSegmentsAreCutBetweenWordsAtTheirSeparators) {
  const auto model = Model::load(testing::source_dir() + "/models/en-de");
  const auto prepare = [&](const std::string& segment) {
    return prepare_source(*model, segment, {});
  };
  const char* const items[] = {"File", "Edit", "View", "Tools", "Help", "Save", "Open"};
  std::string list;
  for (int i = 0; i < 40; ++i) list += (i == 0 ? "" : ", ") + std::string(items[i % 7]);
  documents::SegmentedText text = documents::segment_text(list);
  ASSERT_EQ(text.segments.size(), 1u);
  const auto prepared = prepare_segments(text, {.max_input_length = 1024, .max_whole = 8}, prepare);
  ASSERT_EQ(prepared.size(), text.segments.size());
  EXPECT_GE(prepared.size(), 10u);
  for (const PreparedSource& part : prepared) EXPECT_LE(part.text_ids(), 8);
  EXPECT_EQ(documents::join_segments(text, text.segments), list);
  for (std::size_t i = 1; i + 1 < text.separators.size(); ++i) {
    EXPECT_EQ(text.separators[i], ", ") << i;
  }
  const std::string word = "Donaudampfschifffahrtsgesellschaftskapitaen";
  documents::SegmentedText whole = documents::segment_text(word);
  ASSERT_GT(prepare(word).text_ids(), 2);
  EXPECT_EQ(prepare_segments(whole, {.max_input_length = 1024, .max_whole = 2}, prepare).size(),
            1u);
  EXPECT_EQ(whole.segments[0], word);
  EXPECT_GE(prepare_segments(whole, {.max_input_length = 2}, prepare).size(), 2u);
  // --split-sentences none: each text one segment, cut only where the model cannot read it (the
  // benchmarks against CTranslate2 give both engines the same lines).
  documents::SegmentationOptions none;
  none.split = documents::SplitSentences::kNone;
  documents::SegmentedText unsplit = documents::segment_text(list, none);
  EXPECT_TRUE(unsplit.whole);
  EXPECT_EQ(prepare_segments(unsplit, {.max_input_length = 1024, .max_whole = 8}, prepare).size(),
            1u);
  EXPECT_EQ(unsplit.segments[0], list);
  EXPECT_GE(prepare_segments(unsplit, {.max_input_length = 16, .max_whole = 8}, prepare).size(),
            2u);
}

// What the model translates whole: its config's max_segment_tokens, else half of max_length
// (never below kShortestCutForOutput), within max_input_length.
TEST(TextSegments, LimitsComeFromTheModelAndMaxLength) {
  const auto demo = Model::load(testing::source_dir() + "/models/en-de");
  const auto fixture = Model::load(testing::source_dir() + "/tests/fixtures/shaw_k4/model");
  ASSERT_EQ(fixture->config().max_segment_tokens, 0);
  EXPECT_EQ(segment_limits(*fixture, 1024, 250).max_whole, 125);
  EXPECT_EQ(segment_limits(*fixture, 1024, 12).max_whole, kShortestCutForOutput);
  EXPECT_EQ(segment_limits(*fixture, 100, 1000).max_whole, 100);
  EXPECT_EQ(segment_limits(*fixture, 100, 1000).max_input_length, 100);
  const int own = demo->config().max_segment_tokens;
  ASSERT_GT(own, 0);  // the demo models translate short strings whole
  EXPECT_EQ(segment_limits(*demo, 1024, 250).max_whole, own);
  EXPECT_EQ(segment_limits(*demo, 1024, 250).max_input_length, 1024);
}

}  // namespace
}  // namespace rpt
