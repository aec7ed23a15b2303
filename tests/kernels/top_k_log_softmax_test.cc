// The vocabulary scan on each device (tests/support/op_targets.h) against a full sort: the k
// best (log-prob, token) pairs, ties to the lower id, a blocked token forced down, for flat and
// peaked rows (the CPU scan's block skipping must never lose a candidate), vocabularies not a
// multiple of the block, k = vocab, and beam widths up to 64 over a 32k vocabulary.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "kernels/top_k_log_softmax.h"
#include "tests/support/op_targets.h"

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

class TopKLogSoftmaxTest : public testing::OpTargetTest {
 protected:
  // The op on the target against a full sort: the same ids, log-probs within 1e-5 of float64 plus
  // the normaliser's rounding (a GPU: plus 1e-5 from the CPU); returns the ids [rows, k].
  std::vector<int> expect_full_sort(const std::vector<float>& logits, int rows, int vocab, int k,
                                    const std::vector<int>& blocked, const std::string& what) {
    const TopKLogSoftmaxArgs base{.rows = rows, .vocab = vocab, .k = k};
    const Expected expected = full_sort(logits, rows, vocab, k, blocked, base.blocked_log_prob);
    const std::size_t count = static_cast<std::size_t>(rows) * k;
    Array d_logits = floats(logits), d_blocked = ints(blocked),
          d_log_probs = floats(std::vector<float>(count)), d_ids = ints(std::vector<int>(count));
    TopKLogSoftmaxArgs args = base;
    args.logits = d_logits.as<const float>();
    args.blocked_token = d_blocked.as<const int>();
    args.log_probs = d_log_probs.as<float>();
    args.ids = d_ids.as<int>();
    run([&] { top_k_log_softmax_cpu(args); },
        [&](auto stream) { top_k_log_softmax_cuda(args, stream); });
    const std::vector<int> ids = read_ints(d_ids, count);
    const std::vector<float> log_probs = read_floats(d_log_probs, count);
    EXPECT_EQ(ids, expected.ids) << what;
    // The log normaliser sums `vocab` terms in float32: in the order a build vectorises it (or,
    // unoptimised, one by one: 3.4e-5 at 32k terms under the sanitizers) its error reaches up to
    // vocab units of float32 rounding (2^-24) of the sum.
    const double bound = 1e-5 + vocab * std::ldexp(1.0, -24);
    for (std::size_t i = 0; i < count; ++i) {
      EXPECT_NEAR(log_probs[i], expected.log_probs[i], tolerance(expected.log_probs[i], bound))
          << what << " candidate " << i;
    }
    return ids;
  }

  // rows x vocab logits, normal with deviation `spread`.
  std::vector<float> random_logits(int rows, int vocab, float spread) {
    std::normal_distribution<float> normal(0.0f, spread);
    std::vector<float> logits(static_cast<std::size_t>(rows) * vocab);
    for (float& x : logits) x = normal(random_);
    return logits;
  }

  std::mt19937 random_{11};
};

TEST_P(TopKLogSoftmaxTest, MatchesAFullSort) {
  struct Case {
    int vocab, k;
    float spread;  // logit scale: 1 flat, 8 peaked (most blocks hold no candidate)
  };
  for (const Case c : {Case{1000, 4, 1.0f}, Case{8000, 4, 8.0f}, Case{8000, 64, 3.0f},
                       Case{130, 1, 8.0f}, Case{5, 5, 1.0f}, Case{64, 7, 2.0f}}) {
    const int rows = 6;
    std::vector<float> logits = random_logits(rows, c.vocab, c.spread);
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
    expect_full_sort(logits, rows, c.vocab, c.k, blocked,
                     "vocab " + std::to_string(c.vocab) + " k " + std::to_string(c.k));
  }
}

// Ties go to the lower id: a pair that different GPU threads scan, a pair 256 apart that one
// thread scans in different steps. Row 2's best token is blocked.
TEST_P(TopKLogSoftmaxTest, BlockedTokenAndTies) {
  const int rows = 6, vocab = 1000, k = 5;
  std::vector<float> logits = random_logits(rows, vocab, 3.0f);
  logits[0 * vocab + 20] = logits[0 * vocab + 10] = 50.0f;
  logits[3 * vocab + 261] = logits[3 * vocab + 5] = 50.0f;
  logits[2 * vocab + 10] = 60.0f;
  const auto ids = expect_full_sort(logits, rows, vocab, k, {-1, 3, 10, -1, 7, -1}, "ties");
  EXPECT_EQ(ids[0 * k], 10);
  EXPECT_EQ(ids[0 * k + 1], 20);
  EXPECT_EQ(ids[3 * k], 5);
  EXPECT_EQ(ids[3 * k + 1], 261);
  EXPECT_NE(ids[2 * k], 10);
}

// Beam widths up to the CUDA kernel's stated 64 over a 32k vocabulary, with ties across the
// whole row (every GPU thread's stride) and a blocked token among the best.
TEST_P(TopKLogSoftmaxTest, WideBeamOverALargeVocabulary) {
  const int rows = 3, vocab = 32000, k = 64;
  std::vector<float> logits = random_logits(rows, vocab, 3.0f);
  for (int id : {31999, 7, 16000, 257}) logits[id] = 40.0f;  // row 0: a four-way tie
  logits[vocab + 100] = 45.0f;                               // row 1: best token, blocked
  const auto ids = expect_full_sort(logits, rows, vocab, k, {-1, 100, 31999}, "wide beam");
  EXPECT_EQ((std::vector<int>(ids.begin(), ids.begin() + 4)),
            (std::vector<int>{7, 257, 16000, 31999}));
  EXPECT_NE(ids[k], 100);
}

// The op reads float32 logits only.
RPT_OP_TARGET_INSTANCES(TopKLogSoftmaxTest, testing::op_targets(testing::OpPrecisions::kFloat32));

}  // namespace
}  // namespace rpt::kernels
