// engine/text_segments.h: segments' results put back into their text.
#include "engine/text_segments.h"

#include <gtest/gtest.h>

#include "engine/model.h"
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
  // Through a text's segments: kept in the layout, the readable sentence still translated.
  documents::SegmentedText text = documents::segment_text("Привет мир. Open the file.\n");
  const auto prepared = prepare_segments(
      text, 64, [&](const std::string& segment) { return prepare_source(*model, segment, {}); });
  ASSERT_EQ(prepared.size(), 1u);
  ASSERT_EQ(text.segments.size(), 1u);
  EXPECT_EQ(text.segments[0], "Open the file.");
  EXPECT_EQ(text.separators[0], "Привет мир. ");
}

}  // namespace
}  // namespace rpt
