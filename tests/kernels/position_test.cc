// Relative position index (Shaw) and T5 bucket function.
#include <gtest/gtest.h>

#include "kernels/position.h"

namespace rpt::kernels {
namespace {

TEST(RelativeIndex, MatchesTheReferenceMatrixForLength7K3) {
  // OpenNMT-py's generate_relative_positions_matrix(7, 3), as printed in the seed slides.
  const int expected[7][7] = {{3, 4, 5, 6, 6, 6, 6}, {2, 3, 4, 5, 6, 6, 6}, {1, 2, 3, 4, 5, 6, 6},
                              {0, 1, 2, 3, 4, 5, 6}, {0, 0, 1, 2, 3, 4, 5}, {0, 0, 0, 1, 2, 3, 4},
                              {0, 0, 0, 0, 1, 2, 3}};
  for (int i = 0; i < 7; ++i) {
    for (int j = 0; j < 7; ++j) EXPECT_EQ(relative_index(i, j, 3), expected[i][j]) << i << "," << j;
  }
}

TEST(RelativeIndex, KZeroAlwaysIndexesTheSingleEntry) {
  for (int i = 0; i < 5; ++i) {
    for (int j = 0; j < 5; ++j) EXPECT_EQ(relative_index(i, j, 0), 0);
  }
}

TEST(RelativeIndex, IncrementalDecodingSeesOnlyPastOffsets) {
  // Query at t = 5 with k = 2: keys 0..5 map to 0, 0, 0, 0, 1, 2 (never past k).
  const int expected[6] = {0, 0, 0, 0, 1, 2};
  for (int j = 0; j <= 5; ++j) EXPECT_EQ(relative_index(5, j, 2), expected[j]);
}

TEST(T5Bucket, BidirectionalSmallOffsetsAreExact) {
  // 32 buckets, bidirectional: 16 per direction, 8 exact. Keys after the query use 16..31.
  EXPECT_EQ(t5_bucket(0, true, 32, 128), 0);
  EXPECT_EQ(t5_bucket(-1, true, 32, 128), 1);
  EXPECT_EQ(t5_bucket(-7, true, 32, 128), 7);
  EXPECT_EQ(t5_bucket(1, true, 32, 128), 17);
  EXPECT_EQ(t5_bucket(7, true, 32, 128), 23);
}

TEST(T5Bucket, BidirectionalLargeOffsetsAreLogarithmicAndClipped) {
  // max_exact 8: 8 + floor(log(n/8) / log(128/8) * 8)
  EXPECT_EQ(t5_bucket(-8, true, 32, 128), 8);
  EXPECT_EQ(t5_bucket(-16, true, 32, 128), 10);  // log(2)/log(16)*8 = 2
  EXPECT_EQ(t5_bucket(-64, true, 32, 128), 14);  // log(8)/log(16)*8 = 6
  EXPECT_EQ(t5_bucket(-127, true, 32, 128), 15);
  EXPECT_EQ(t5_bucket(-1000, true, 32, 128), 15);  // clipped to the last bucket
  EXPECT_EQ(t5_bucket(1000, true, 32, 128), 31);
}

TEST(T5Bucket, CausalIgnoresFutureAndUsesAllBuckets) {
  EXPECT_EQ(t5_bucket(3, false, 32, 128), 0);  // future keys fold onto offset 0
  EXPECT_EQ(t5_bucket(-3, false, 32, 128), 3);
  EXPECT_EQ(t5_bucket(-15, false, 32, 128), 15);  // 16 exact buckets when causal
  EXPECT_EQ(t5_bucket(-32, false, 32, 128), 21);  // 16 + floor(log(2) / log(8) * 16)
  EXPECT_EQ(t5_bucket(-5000, false, 32, 128), 31);
}

}  // namespace
}  // namespace rpt::kernels
