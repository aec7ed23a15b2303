// Beam search edge cases on hand-made log-probabilities (no model involved).
#include "engine/beam_search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/errors.h"

namespace rpt {
namespace {

constexpr int kStart = 0;
constexpr int kEos = 1;
constexpr int kVocab = 6;

// The decoder's vocabulary scan in miniature: every row's candidates best first (EOS forced to
// -65504 while blocked), then one beam search step.
std::vector<int> advance(BeamSearch& search, std::vector<float> log_probs) {
  const int rows = search.alive();
  std::vector<float> best;
  std::vector<int> ids;
  for (int r = 0; r < rows; ++r) {
    float* row = log_probs.data() + r * kVocab;
    if (search.eos_blocked()) row[kEos] = -65504.0f;
    std::vector<int> order(kVocab);
    for (int t = 0; t < kVocab; ++t) order[t] = t;
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return row[a] > row[b]; });
    for (int t : order) {
      best.push_back(row[t]);
      ids.push_back(t);
    }
  }
  return search.advance(best.data(), ids.data(), kVocab);
}

// Log-probs for `rows` alive beams, every row the same distribution.
std::vector<float> rows_of(int rows, const std::vector<float>& distribution) {
  std::vector<float> out;
  for (int r = 0; r < rows; ++r) out.insert(out.end(), distribution.begin(), distribution.end());
  return out;
}

// A distribution preferring `token` with log-prob -0.1, the others -3 .. -3.4, EOS `eos_logp`.
std::vector<float> prefer(int token, float eos_logp = -5.0f) {
  std::vector<float> d(kVocab);
  for (int t = 0; t < kVocab; ++t) d[t] = -3.0f - 0.1f * t;
  d[kEos] = eos_logp;
  d[token] = -0.1f;
  return d;
}

TEST(BeamSearch, BeamOneIsGreedyWithNormalisedScore) {
  DecodingOptions options;
  options.beam_size = 1;
  BeamSearch search(options, kStart, kEos);
  const std::vector<int> path = {3, 4, 2};
  float total = 0.0f;
  for (int token : path) {
    ASSERT_FALSE(search.done());
    EXPECT_EQ(search.alive(), 1);
    auto lp = rows_of(1, prefer(token));
    total += lp[token];
    const auto parents = advance(search, lp);
    EXPECT_EQ(parents, std::vector<int>{0});
  }
  auto lp = rows_of(1, prefer(kEos, -0.01f));
  total += lp[kEos];
  advance(search, lp);
  ASSERT_TRUE(search.done());
  ASSERT_EQ(search.results().size(), 1u);
  EXPECT_EQ(search.results()[0].ids, path);
  // Four tokens generated (EOS included); average penalty is len + 1 = 5 with alpha 1.
  EXPECT_NEAR(search.results()[0].score, total / 5.0f, 1e-6);
}

TEST(BeamSearch, EosAtFirstStepGivesAnEmptyHypothesis) {
  DecodingOptions options;
  options.beam_size = 4;
  BeamSearch search(options, kStart, kEos);
  EXPECT_EQ(search.last_token(0), kStart);
  auto lp = rows_of(1, prefer(kEos, -0.01f));
  advance(search, lp);
  ASSERT_TRUE(search.done());
  ASSERT_EQ(search.results().size(), 1u);
  EXPECT_TRUE(search.results()[0].ids.empty());
}

TEST(BeamSearch, MaxLengthFinishesEveryBeam) {
  DecodingOptions options;
  options.beam_size = 3;
  options.n_best = 3;
  options.max_length = 4;
  BeamSearch search(options, kStart, kEos);
  int steps = 0;
  while (!search.done()) {
    auto lp = rows_of(search.alive(), prefer(2, -20.0f));
    advance(search, lp);
    ++steps;
  }
  EXPECT_EQ(steps, 4);
  ASSERT_EQ(search.results().size(), 3u);
  for (const Hypothesis& h : search.results()) EXPECT_EQ(h.ids.size(), 4u);
}

TEST(BeamSearch, NBestAreDistinctAndOrderedByScore) {
  DecodingOptions options;
  options.beam_size = 4;
  options.n_best = 4;
  options.max_length = 6;
  BeamSearch search(options, kStart, kEos);
  // Step 1 spreads over tokens 2..5; afterwards every beam ends.
  std::vector<float> first = {-9.0f, -9.0f, -0.5f, -1.0f, -1.5f, -2.0f};
  advance(search, first);
  ASSERT_EQ(search.alive(), 4);
  auto lp = rows_of(4, prefer(kEos, -0.01f));
  advance(search, lp);
  ASSERT_TRUE(search.done());
  const auto& results = search.results();
  ASSERT_EQ(results.size(), 4u);
  for (std::size_t i = 1; i < results.size(); ++i) {
    EXPECT_GE(results[i - 1].score, results[i].score);
    EXPECT_NE(results[i - 1].ids, results[i].ids);
  }
  EXPECT_EQ(results[0].ids, std::vector<int>{2});
}

TEST(BeamSearch, FinishedBeamLeavesAndOthersContinueUntilTheBestEnds) {
  DecodingOptions options;
  options.beam_size = 2;
  BeamSearch search(options, kStart, kEos);
  std::vector<float> first = {-9.0f, -9.0f, -0.2f, -0.3f, -9.0f, -9.0f};
  advance(search, first);
  ASSERT_EQ(search.alive(), 2);
  // Beam 0 (token 2) keeps going; beam 1 (token 3) ends: second-best pick is EOS.
  std::vector<float> second = {-9.0f, -6.0f, -9.0f, -9.0f, -0.1f, -9.0f,   // beam 0
                               -9.0f, -0.2f, -9.0f, -9.0f, -9.0f, -9.0f};  // beam 1
  const auto parents = advance(search, second);
  EXPECT_FALSE(search.done());  // the best pick (2 4) is not finished
  // Survivors: (2 4) from beam 0 and the best non-EOS continuation.
  ASSERT_EQ(parents.size(), 1u);
  EXPECT_EQ(parents[0], 0);
  auto lp = rows_of(search.alive(), prefer(kEos, -0.01f));
  advance(search, lp);
  ASSERT_TRUE(search.done());
  EXPECT_EQ(search.results()[0].ids, (std::vector<int>{2, 4}));
}

TEST(BeamSearch, MinLengthBlocksEarlyEos) {
  DecodingOptions options;
  options.beam_size = 1;
  options.min_length = 2;
  BeamSearch search(options, kStart, kEos);
  for (int step = 0; step < 2; ++step) {
    auto lp = rows_of(1, prefer(kEos, -0.01f));  // EOS is the favourite...
    advance(search, lp);
    EXPECT_FALSE(search.done());  // ...but blocked
  }
  auto lp = rows_of(1, prefer(kEos, -0.01f));
  advance(search, lp);
  ASSERT_TRUE(search.done());
  EXPECT_EQ(search.results()[0].ids.size(), 2u);
}

TEST(BeamSearch, GnmtPenaltyNormalisesScores) {
  DecodingOptions options;
  options.beam_size = 1;
  options.length_penalty_type = LengthPenaltyType::kGnmt;
  options.length_penalty = 0.6f;
  BeamSearch search(options, kStart, kEos);
  auto lp = rows_of(1, prefer(kEos, -0.5f));
  lp[kEos] = -0.01f;
  advance(search, lp);
  ASSERT_TRUE(search.done());
  EXPECT_NEAR(search.results()[0].score, -0.01 / std::pow((5.0 + 2.0) / 6.0, 0.6), 1e-6);
}

TEST(BeamSearch, RejectsOptionsOutOfRange) {
  DecodingOptions options;
  options.beam_size = 0;
  EXPECT_THROW(validate(options), InvalidArgument);
  options.beam_size = 2;
  options.n_best = 3;
  EXPECT_THROW(validate(options), InvalidArgument);
  options.n_best = 1;
  options.max_length = 0;
  EXPECT_THROW(validate(options), InvalidArgument);
  options.max_length = 5;
  options.min_length = 6;
  EXPECT_THROW(validate(options), InvalidArgument);
  options.min_length = 0;
  options.length_penalty = -1.0f;
  EXPECT_THROW(validate(options), InvalidArgument);
  options.length_penalty = 0.5f;
  EXPECT_NO_THROW(validate(options));
}

}  // namespace
}  // namespace rpt
