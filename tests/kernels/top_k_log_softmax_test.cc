// The CPU vocabulary scan against a full sort: the k best (log-prob, token) pairs, ties to the
// lower id, a blocked token forced down, for flat and peaked rows (the block skipping of the
// scan must never lose a candidate), vocabularies not a multiple of the block, and k = vocab.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "kernels/top_k_log_softmax.h"

namespace rpt::kernels {
namespace {

struct Expected {
  std::vector<float> log_probs;
  std::vector<int> ids;
};

Expected full_sort(const std::vector<float>& logits, int rows, int vocab, int k,
                   const std::vector<int>& blocked, float blocked_log_prob) {
  Expected out;
  for (int r = 0; r < rows; ++r) {
    const float* row = logits.data() + static_cast<long>(r) * vocab;
    // The normaliser in float64 with a plain loop: independent of the kernel's vectorised one.
    const double max = *std::max_element(row, row + vocab);
    double sum = 0.0;
    for (int c = 0; c < vocab; ++c) sum += std::exp(row[c] - max);
    const double normalizer = max + std::log(sum);
    std::vector<double> log_probs(static_cast<std::size_t>(vocab));  // float64: no new ties
    for (int c = 0; c < vocab; ++c) {
      log_probs[static_cast<std::size_t>(c)] =
          c == blocked[static_cast<std::size_t>(r)] ? blocked_log_prob : row[c] - normalizer;
    }
    std::vector<int> order(static_cast<std::size_t>(vocab));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return log_probs[static_cast<std::size_t>(a)] > log_probs[static_cast<std::size_t>(b)];
    });
    for (int i = 0; i < k; ++i) {
      out.ids.push_back(order[static_cast<std::size_t>(i)]);
      out.log_probs.push_back(static_cast<float>(
          log_probs[static_cast<std::size_t>(order[static_cast<std::size_t>(i)])]));
    }
  }
  return out;
}

TEST(TopKLogSoftmaxCpu, MatchesAFullSort) {
  std::mt19937 random(11);
  std::normal_distribution<float> normal;
  struct Case {
    int vocab, k;
    float spread;  // logit scale: 1 flat, 8 peaked (most blocks hold no candidate)
  };
  for (const Case c : {Case{1000, 4, 1.0f}, Case{8000, 4, 8.0f}, Case{8000, 64, 3.0f},
                       Case{130, 1, 8.0f}, Case{5, 5, 1.0f}, Case{64, 7, 2.0f}}) {
    const int rows = 6;
    std::vector<float> logits(static_cast<std::size_t>(rows) * c.vocab);
    for (float& x : logits) x = c.spread * normal(random);
    // Ties: equal best logits far apart (different blocks) and adjacent, in rows 1 and 2.
    if (c.vocab >= 130) {
      logits[1 * static_cast<std::size_t>(c.vocab) + 129] = 60.0f;
      logits[1 * static_cast<std::size_t>(c.vocab) + 3] = 60.0f;
      logits[2 * static_cast<std::size_t>(c.vocab) + 70] = 55.0f;
      logits[2 * static_cast<std::size_t>(c.vocab) + 71] = 55.0f;
    }
    // Blocked tokens: row 3 blocks its best token, row 4 a middling one.
    std::vector<int> blocked(rows, -1);
    const float* row3 = logits.data() + 3 * static_cast<std::size_t>(c.vocab);
    blocked[3] = static_cast<int>(std::max_element(row3, row3 + c.vocab) - row3);
    blocked[4] = c.vocab / 2;
    const TopKLogSoftmaxArgs base{.logits = logits.data(),
                                  .rows = rows,
                                  .vocab = c.vocab,
                                  .k = c.k,
                                  .blocked_token = blocked.data()};
    const Expected expected = full_sort(logits, rows, c.vocab, c.k, blocked, base.blocked_log_prob);
    std::vector<float> log_probs(static_cast<std::size_t>(rows) * c.k);
    std::vector<int> ids(log_probs.size());
    TopKLogSoftmaxArgs args = base;
    args.log_probs = log_probs.data();
    args.ids = ids.data();
    top_k_log_softmax_cpu(args);
    const std::string what = "vocab " + std::to_string(c.vocab) + " k " + std::to_string(c.k);
    EXPECT_EQ(ids, expected.ids) << what;
    ASSERT_EQ(log_probs.size(), expected.log_probs.size());
    for (std::size_t i = 0; i < log_probs.size(); ++i) {
      EXPECT_NEAR(log_probs[i], expected.log_probs[i], 1e-5) << what << " candidate " << i;
    }
  }
}

}  // namespace
}  // namespace rpt::kernels
