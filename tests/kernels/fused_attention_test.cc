// The fused attention's CPU definition against the unfused path of the CPU engine (score GEMM,
// relative softmax with the key term from one GEMM, context GEMM plus bucket sums x V_rel), in
// the three shapes the engine uses it for: encoder self-attention over padded sequences,
// incremental decoder self-attention over a cache, and cross-attention without relative terms.
#include <gtest/gtest.h>

#include <ostream>

#include <random>
#include <vector>

#include "kernels/fused_attention.h"
#include "tests/support/reference_kernels.h"
#include "kernels/gemm.h"
#include "kernels/relative_softmax.h"

namespace rpt::kernels {
namespace {

std::vector<float> random_vector(std::size_t n, std::mt19937& random) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = normal(random);
  return v;
}

struct Case {
  int heads, head_dim, k;
  bool t5_bias;
};

// A name of its own: gtest would print the struct's bytes, padding included (names that change
// from one build to the next).
void PrintTo(const Case& c, std::ostream* out) {
  *out << c.heads << "x" << c.head_dim << "_k" << c.k << (c.t5_bias ? "_t5" : "");
}

// One (row, head) the unfused way: q [head_dim] at position `position` against `count` keys and
// values at rows of `stride` floats.
std::vector<float> unfused(const float* q, int position, const float* keys, const float* values,
                           int stride, int count, int head_dim, float scale, int k,
                           const float* k_rel, const float* v_rel, const float* bias_centre) {
  const int width = 2 * k + 1;
  std::vector<float> scaled(q, q + head_dim);
  for (float& x : scaled) x *= scale;
  std::vector<float> scores(static_cast<std::size_t>(count));
  gemm_cpu({.transpose_b = true,
            .m = 1,
            .n = count,
            .k = head_dim,
            .a = scaled.data(),
            .lda = head_dim,
            .b = keys,
            .ldb = stride,
            .c = scores.data(),
            .ldc = count});
  std::vector<float> key_term(static_cast<std::size_t>(width)), buckets(key_term.size(), 0.0f);
  RelativeSoftmaxArgs args;
  args.scores = scores.data();
  args.queries = 1;
  args.keys = count;
  args.ld_scores = count;
  args.first_query_position = position;
  if (k > 0) {
    gemm_cpu({.transpose_b = true,
              .m = 1,
              .n = width,
              .k = head_dim,
              .a = scaled.data(),
              .lda = head_dim,
              .b = k_rel,
              .ldb = head_dim,
              .c = key_term.data(),
              .ldc = width});
    args.key_term = key_term.data();
    args.ld_key_term = width;
    args.max_relative_position = k;
    args.bucket_sums = buckets.data();
    args.ld_bucket_sums = width;
  }
  args.offset_bias = bias_centre;
  relative_softmax_cpu(args);
  std::vector<float> z(static_cast<std::size_t>(head_dim), 0.0f);
  gemm_cpu({.m = 1,
            .n = head_dim,
            .k = count,
            .a = scores.data(),
            .lda = count,
            .b = values,
            .ldb = stride,
            .c = z.data(),
            .ldc = head_dim});
  if (k > 0) {
    gemm_cpu({.m = 1,
              .n = head_dim,
              .k = width,
              .a = buckets.data(),
              .lda = width,
              .b = v_rel,
              .ldb = head_dim,
              .beta = 1.0f,
              .c = z.data(),
              .ldc = head_dim});
  }
  return z;
}

class FusedAttentionTest : public ::testing::TestWithParam<Case> {};

// Encoder: 3 sequences padded to 7; query row i of sequence b sits at position i.
TEST_P(FusedAttentionTest, EncoderSelfAttention) {
  const Case c = GetParam();
  std::mt19937 random(3);
  const int d = c.heads * c.head_dim, length = 7, batch = 3, width = 2 * c.k + 1;
  const std::vector<int> lengths = {7, 4, 1};
  const auto qkv = random_vector(static_cast<std::size_t>(batch) * length * 3 * d, random);
  const auto k_rel = random_vector(static_cast<std::size_t>(width) * c.head_dim, random);
  const auto v_rel = random_vector(k_rel.size(), random);
  const int bias_width = 2 * length + 1;
  const auto bias = random_vector(static_cast<std::size_t>(c.heads) * bias_width, random);
  const float scale = 0.37f;

  std::vector<const void*> sequences;
  std::vector<int> counts, positions;
  for (int b = 0; b < batch; ++b) {
    for (int i = 0; i < length; ++i) {
      sequences.push_back(qkv.data() + static_cast<long>(b) * length * 3 * d);
      counts.push_back(i < lengths[b] ? lengths[b] : 0);
      positions.push_back(i);
    }
  }
  FusedAttentionArgs args;
  args.rows = batch * length;
  args.heads = c.heads;
  args.head_dim = c.head_dim;
  args.scale = scale;
  args.queries = qkv.data();
  args.query_stride = 3 * d;
  args.sequences = sequences.data();
  args.key_shift = d;
  args.value_shift = 2 * d;
  args.position_stride = 3 * d;
  args.key_counts = counts.data();
  args.query_positions = positions.data();
  args.max_relative_position = c.k;
  args.relative_keys = c.k > 0 ? k_rel.data() : nullptr;
  args.relative_values = c.k > 0 ? v_rel.data() : nullptr;
  args.offset_bias = c.t5_bias ? bias.data() : nullptr;
  args.offset_bias_width = bias_width;
  std::vector<float> out(static_cast<std::size_t>(args.rows) * d, 99.0f);
  args.out = out.data();
  args.out_stride = d;
  reference_fused_attention(args);

  for (int row = 0; row < args.rows; ++row) {
    const int b = row / length, i = row % length;
    for (int h = 0; h < c.heads; ++h) {
      const float* z = out.data() + static_cast<long>(row) * d + h * c.head_dim;
      if (i >= lengths[b]) {
        for (int x = 0; x < c.head_dim; ++x) EXPECT_EQ(z[x], 0.0f) << "padding row " << row;
        continue;
      }
      const float* base = qkv.data() + static_cast<long>(b) * length * 3 * d + h * c.head_dim;
      const auto expected = unfused(
          qkv.data() + static_cast<long>(row) * 3 * d + h * c.head_dim, i, base + d, base + 2 * d,
          3 * d, lengths[b], c.head_dim, scale, c.k, k_rel.data(), v_rel.data(),
          c.t5_bias ? bias.data() + h * bias_width + (bias_width - 1) / 2 : nullptr);
      for (int x = 0; x < c.head_dim; ++x) {
        EXPECT_NEAR(z[x], expected[static_cast<std::size_t>(x)], 1e-5) << "row " << row;
      }
    }
  }
}

// Decoder: rows at different steps over their own cache [rows, capacity, 2, d] (keys, values).
TEST_P(FusedAttentionTest, DecoderCacheRowsAtDifferentSteps) {
  const Case c = GetParam();
  std::mt19937 random(4);
  const int d = c.heads * c.head_dim, capacity = 40, width = 2 * c.k + 1;
  const std::vector<int> steps = {0, 5, 39, 17};
  const int rows = static_cast<int>(steps.size());
  const auto cache = random_vector(static_cast<std::size_t>(rows) * capacity * 2 * d, random);
  const auto queries = random_vector(static_cast<std::size_t>(rows) * d, random);
  const auto k_rel = random_vector(static_cast<std::size_t>(width) * c.head_dim, random);
  const auto v_rel = random_vector(k_rel.size(), random);
  const int bias_width = 2 * capacity + 1;
  const auto bias = random_vector(static_cast<std::size_t>(c.heads) * bias_width, random);
  std::vector<const void*> sequences;
  std::vector<int> counts;
  for (int r = 0; r < rows; ++r) {
    sequences.push_back(cache.data() + static_cast<long>(r) * capacity * 2 * d);
    counts.push_back(steps[static_cast<std::size_t>(r)] + 1);
  }
  FusedAttentionArgs args;
  args.rows = rows;
  args.heads = c.heads;
  args.head_dim = c.head_dim;
  args.scale = 0.25f;
  args.queries = queries.data();
  args.query_stride = d;
  args.sequences = sequences.data();
  args.key_shift = 0;
  args.value_shift = d;
  args.position_stride = 2 * d;
  args.key_counts = counts.data();
  args.query_positions = steps.data();
  args.max_relative_position = c.k;
  args.relative_keys = c.k > 0 ? k_rel.data() : nullptr;
  args.relative_values = c.k > 0 ? v_rel.data() : nullptr;
  args.offset_bias = c.t5_bias ? bias.data() : nullptr;
  args.offset_bias_width = bias_width;
  std::vector<float> out(static_cast<std::size_t>(rows) * d);
  args.out = out.data();
  args.out_stride = d;
  reference_fused_attention(args);
  for (int r = 0; r < rows; ++r) {
    for (int h = 0; h < c.heads; ++h) {
      const float* base = cache.data() + static_cast<long>(r) * capacity * 2 * d + h * c.head_dim;
      const auto expected = unfused(
          queries.data() + static_cast<long>(r) * d + h * c.head_dim,
          steps[static_cast<std::size_t>(r)], base, base + d, 2 * d,
          counts[static_cast<std::size_t>(r)], c.head_dim, 0.25f, c.k, k_rel.data(), v_rel.data(),
          c.t5_bias ? bias.data() + h * bias_width + (bias_width - 1) / 2 : nullptr);
      for (int x = 0; x < c.head_dim; ++x) {
        EXPECT_NEAR(out[static_cast<std::size_t>(r * d + h * c.head_dim + x)],
                    expected[static_cast<std::size_t>(x)], 1e-5)
            << "row " << r << " head " << h;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, FusedAttentionTest,
                         ::testing::Values(Case{4, 16, 4, false}, Case{3, 24, 2, false},
                                           Case{2, 8, 0, false}, Case{2, 8, 0, true},
                                           Case{1, 40, 16, false}));

// Cross-attention: beams of one sentence share its memory (the same base pointer).
TEST(FusedAttentionCross, BeamsShareTheirSentenceMemory) {
  std::mt19937 random(5);
  const int heads = 2, head_dim = 8, d = heads * head_dim, layers = 3, layer = 1;
  const int stride = layers * 2 * d;
  const auto memory_a = random_vector(static_cast<std::size_t>(6) * stride, random);
  const auto memory_b = random_vector(static_cast<std::size_t>(2) * stride, random);
  const auto queries = random_vector(static_cast<std::size_t>(3) * d, random);
  const std::vector<const void*> sequences = {memory_a.data(), memory_a.data(), memory_b.data()};
  const std::vector<int> counts = {6, 6, 2}, positions = {3, 3, 0};
  FusedAttentionArgs args;
  args.rows = 3;
  args.heads = heads;
  args.head_dim = head_dim;
  args.scale = 0.5f;
  args.queries = queries.data();
  args.query_stride = d;
  args.sequences = sequences.data();
  args.key_shift = layer * 2 * d;
  args.value_shift = layer * 2 * d + d;
  args.position_stride = stride;
  args.key_counts = counts.data();
  args.query_positions = positions.data();
  std::vector<float> out(static_cast<std::size_t>(3) * d);
  args.out = out.data();
  args.out_stride = d;
  reference_fused_attention(args);
  for (int r = 0; r < 3; ++r) {
    const float* memory = static_cast<const float*>(sequences[static_cast<std::size_t>(r)]);
    for (int h = 0; h < heads; ++h) {
      const float* base = memory + layer * 2 * d + h * head_dim;
      const auto expected = unfused(queries.data() + r * d + h * head_dim, 0, base, base + d,
                                    stride, counts[static_cast<std::size_t>(r)], head_dim, 0.5f, 0,
                                    nullptr, nullptr, nullptr);
      for (int x = 0; x < head_dim; ++x) {
        EXPECT_NEAR(out[static_cast<std::size_t>(r * d + h * head_dim + x)],
                    expected[static_cast<std::size_t>(x)], 1e-5);
      }
    }
  }
}

}  // namespace
}  // namespace rpt::kernels
