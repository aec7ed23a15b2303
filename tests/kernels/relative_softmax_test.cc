// The fused relative softmax against a direct O(L^2 d) evaluation of the equations in
// docs/engine.md that builds the relative index matrix and gathers K_rel / V_rel per (i, j).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/gemm.h"
#include "kernels/position.h"
#include "kernels/relative_softmax.h"

namespace rpt::kernels {
namespace {

struct Problem {
  int queries, keys, d, k, first_position;
};

std::vector<float> random_vector(std::size_t n, std::mt19937& random) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = normal(random);
  return v;
}

class RelativeSoftmaxTest : public ::testing::TestWithParam<Problem> {};

TEST_P(RelativeSoftmaxTest, MatchesDirectEvaluation) {
  const Problem p = GetParam();
  std::mt19937 random(11);
  const int width = 2 * p.k + 1;
  const auto q = random_vector(static_cast<std::size_t>(p.queries) * p.d, random);  // scaled
  const auto keys = random_vector(static_cast<std::size_t>(p.keys) * p.d, random);
  const auto values = random_vector(static_cast<std::size_t>(p.keys) * p.d, random);
  const auto k_rel = random_vector(static_cast<std::size_t>(width) * p.d, random);
  const auto v_rel = random_vector(static_cast<std::size_t>(width) * p.d, random);

  // Direct: e_ij = q_i . (k_j + K_rel[r(i,j)]); z_i = sum_j alpha_ij (v_j + V_rel[r(i,j)]).
  std::vector<double> expected(static_cast<std::size_t>(p.queries) * p.d, 0.0);
  for (int i = 0; i < p.queries; ++i) {
    std::vector<double> e(static_cast<std::size_t>(p.keys));
    double max_e = -1e300;
    for (int j = 0; j < p.keys; ++j) {
      const int r = relative_index(p.first_position + i, j, p.k);
      double dot = 0.0;
      for (int c = 0; c < p.d; ++c)
        dot += q[i * p.d + c] * (keys[j * p.d + c] + k_rel[r * p.d + c]);
      e[j] = dot;
      max_e = std::max(max_e, dot);
    }
    double sum = 0.0;
    for (double& x : e) sum += (x = std::exp(x - max_e));
    for (int j = 0; j < p.keys; ++j) {
      const int r = relative_index(p.first_position + i, j, p.k);
      for (int c = 0; c < p.d; ++c) {
        expected[i * p.d + c] += e[j] / sum * (values[j * p.d + c] + v_rel[r * p.d + c]);
      }
    }
  }

  // Ours: scores by GEMM, key term by one GEMM, fused softmax + bucket sums, two GEMMs.
  std::vector<float> scores(static_cast<std::size_t>(p.queries) * p.keys);
  gemm_cpu({.transpose_b = true,
            .m = p.queries,
            .n = p.keys,
            .k = p.d,
            .a = q.data(),
            .lda = p.d,
            .b = keys.data(),
            .ldb = p.d,
            .c = scores.data(),
            .ldc = p.keys});
  std::vector<float> key_term(static_cast<std::size_t>(p.queries) * width);
  gemm_cpu({.transpose_b = true,
            .m = p.queries,
            .n = width,
            .k = p.d,
            .a = q.data(),
            .lda = p.d,
            .b = k_rel.data(),
            .ldb = p.d,
            .c = key_term.data(),
            .ldc = width});
  std::vector<float> buckets(static_cast<std::size_t>(p.queries) * width);
  RelativeSoftmaxArgs args;
  args.scores = scores.data();
  args.queries = p.queries;
  args.keys = p.keys;
  args.ld_scores = p.keys;
  args.first_query_position = p.first_position;
  args.key_term = key_term.data();
  args.ld_key_term = width;
  args.max_relative_position = p.k;
  args.bucket_sums = buckets.data();
  args.ld_bucket_sums = width;
  relative_softmax_cpu(args);
  std::vector<float> z(static_cast<std::size_t>(p.queries) * p.d);
  gemm_cpu({.m = p.queries,
            .n = p.d,
            .k = p.keys,
            .a = scores.data(),
            .lda = p.keys,
            .b = values.data(),
            .ldb = p.d,
            .c = z.data(),
            .ldc = p.d});
  gemm_cpu({.m = p.queries,
            .n = p.d,
            .k = width,
            .a = buckets.data(),
            .lda = width,
            .b = v_rel.data(),
            .ldb = p.d,
            .beta = 1.0f,
            .c = z.data(),
            .ldc = p.d});

  for (std::size_t i = 0; i < z.size(); ++i) EXPECT_NEAR(z[i], expected[i], 1e-5) << i;
  for (int i = 0; i < p.queries; ++i) {  // probabilities and bucket sums each sum to one
    double row = 0.0, bucket_row = 0.0;
    for (int j = 0; j < p.keys; ++j) row += scores[i * p.keys + j];
    for (int r = 0; r < width; ++r) bucket_row += buckets[i * width + r];
    EXPECT_NEAR(row, 1.0, 1e-5);
    EXPECT_NEAR(bucket_row, 1.0, 1e-5);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, RelativeSoftmaxTest,
    ::testing::Values(Problem{7, 7, 8, 3, 0},     // encoder, the paper's small example
                      Problem{1, 1, 4, 2, 0},     // a single token
                      Problem{20, 20, 16, 4, 0},  // longer than 2k+1
                      Problem{5, 5, 8, 16, 0},    // k larger than the sequence
                      Problem{1, 12, 8, 4, 11},   // decoder step t = 11: offsets -k..0
                      Problem{3, 9, 8, 2, 6},     // a block of queries late in a sequence
                      Problem{6, 6, 8, 0, 0}));   // k = 0: one shared table row

TEST(RelativeSoftmax, OffsetBiasIsAddedPerDistance) {
  // T5 style: with zero scores the row is softmax of bias[j - i].
  const int keys = 5;
  std::vector<float> table(2 * keys + 1);
  for (int o = -keys; o <= keys; ++o) table[o + keys] = 0.25f * static_cast<float>(o);
  std::vector<float> scores(keys, 0.0f);
  RelativeSoftmaxArgs args;
  args.scores = scores.data();
  args.queries = 1;
  args.keys = keys;
  args.ld_scores = keys;
  args.first_query_position = 2;
  args.offset_bias = table.data() + keys;
  relative_softmax_cpu(args);
  double sum = 0.0;
  for (int j = 0; j < keys; ++j) sum += std::exp(0.25 * (j - 2));
  for (int j = 0; j < keys; ++j) EXPECT_NEAR(scores[j], std::exp(0.25 * (j - 2)) / sum, 1e-6);
}

}  // namespace
}  // namespace rpt::kernels
