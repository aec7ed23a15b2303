// engine/text_segments.h: segments' results put back into their text.
#include "engine/text_segments.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace rpt
