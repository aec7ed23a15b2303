// The fused attention (kernels/fused_attention.h) on each device (tests/support/op_targets.h)
// against its float64 definition, reference_fused_attention (tests/support/reference_kernels.h).
// The CPU has no fused kernel: there the unfused path of the CPU engine computes it (score GEMM,
// relative softmax with the key term from one GEMM, context GEMM plus bucket sums x V_rel); a
// GPU runs fused_attention_cuda. In the shapes the engine uses it for: encoder self-attention
// over padded sequences (Shaw or T5), decoder rows over their own caches at different steps,
// beams sharing their sentence's memory in cross-attention, and long inputs at the largest head
// sizes. Queries sit inside wider rows, output rows are padded: the padding is never written,
// padding rows get zeros.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/fused_attention.h"
#include "kernels/gemm.h"
#include "kernels/relative_softmax.h"
#include "tests/support/op_targets.h"
#include "tests/support/reference_kernels.h"

namespace rpt::kernels {
namespace {

// One call's shape: every sequence the rows read lies in one buffer, each row naming its
// sequence by an offset into it (the row's base pointer: host for the CPU, device for a GPU).
struct AttentionCase {
  std::string name;
  int heads = 0, head_dim = 0;
  int k = 0;             // max relative position (Shaw); 0: no relative terms
  bool t5_bias = false;  // an offset bias per head, [heads, bias_width]
  float scale = 0.0f;    // 0: 1 / sqrt(head_dim)
  int query_stride = 0;  // of the query rows, in elements
  int position_stride = 0;
  long key_shift = 0, value_shift = 0;   // from a row's base pointer, in elements
  int bias_width = 257;                  // offsets up to +-128
  std::vector<long> sequence_offsets{};  // per row, in elements
  std::vector<int> counts{};             // per row; 0: a padding row
  std::vector<int> positions{};          // per row
  int d() const { return heads * head_dim; }
};

// Rows over QKV rows [positions, 3 d] (keys at d, values at 2 d), the queries in rows of 3 d, as
// the encoder lays them out; rows added with add_row.
AttentionCase over_qkv_rows(std::string name, int heads, int head_dim, int k, bool t5) {
  const int d = heads * head_dim;
  return {.name = std::move(name),
          .heads = heads,
          .head_dim = head_dim,
          .k = k,
          .t5_bias = t5,
          .query_stride = 3 * d,
          .position_stride = 3 * d,
          .key_shift = d,
          .value_shift = 2L * d};
}

void add_row(AttentionCase& c, long sequence_offset, int count, int position) {
  c.sequence_offsets.push_back(sequence_offset);
  c.counts.push_back(count);
  c.positions.push_back(position);
}

// Encoder self-attention: `lengths` sequences padded to `padded` positions, query row i of each
// at position i; rows past a sequence's length are padding.
AttentionCase encoder(std::string name, int heads, int head_dim, int k, bool t5,
                      const std::vector<int>& lengths, int padded) {
  AttentionCase c = over_qkv_rows(std::move(name), heads, head_dim, k, t5);
  for (std::size_t b = 0; b < lengths.size(); ++b) {
    for (int i = 0; i < padded; ++i) {
      add_row(c, static_cast<long>(b) * padded * 3 * c.d(), i < lengths[b] ? lengths[b] : 0, i);
    }
  }
  return c;
}

// Decoder self-attention: row r at step steps[r] over its own cache of `capacity` positions of
// [keys | values] per layer, [layers, capacity, 2, d], reading layer `layer`; the queries in QKV
// rows.
AttentionCase decoder(std::string name, int heads, int head_dim, int k, bool t5,
                      const std::vector<int>& steps, int capacity, int layers, int layer) {
  AttentionCase c = over_qkv_rows(std::move(name), heads, head_dim, k, t5);
  const int d = c.d();
  c.position_stride = 2 * d;
  c.key_shift = static_cast<long>(layer) * capacity * 2 * d;
  c.value_shift = c.key_shift + d;
  for (std::size_t r = 0; r < steps.size(); ++r) {
    add_row(c, static_cast<long>(r) * layers * capacity * 2 * d, steps[r] + 1, steps[r]);
  }
  return c;
}

// The head sizes and relative widths the small shapes run at: Shaw at k 4, 2 and 16, none, T5.
struct Heads {
  int heads, head_dim, k;
  bool t5;
};
constexpr Heads kSmallHeads[] = {
    {4, 16, 4, false}, {3, 24, 2, false}, {2, 8, 0, false}, {2, 8, 0, true}, {1, 40, 16, false}};

std::string heads_name(const char* what, const Heads& h) {
  return std::string(what) + "_" + std::to_string(h.heads) + "x" + std::to_string(h.head_dim) +
         "_k" + std::to_string(h.k) + (h.t5 ? "_t5" : "");
}

// One (row, head) the unfused way: the scaled query against `count` keys and values at rows of
// `stride` elements, as the CPU engine computes it (engine/cpu/attention.h).
void unfused_head(const float* q, int position, const float* keys, const float* values, int stride,
                  int count, int head_dim, float scale, int k, const float* k_rel,
                  const float* v_rel, const float* bias_centre, float* z) {
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
  gemm_cpu({.m = 1,
            .n = head_dim,
            .k = count,
            .a = scores.data(),
            .lda = count,
            .b = values,
            .ldb = stride,
            .c = z,
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
              .c = z,
              .ldc = head_dim});
  }
}

// The fused attention's arguments computed the unfused way (float32, host pointers).
void unfused_attention(const FusedAttentionArgs& args) {
  const auto* queries = static_cast<const float*>(args.queries);
  auto* out = static_cast<float*>(args.out);
  const int centre = (args.offset_bias_width - 1) / 2;
  for (int row = 0; row < args.rows; ++row) {
    const auto* base = static_cast<const float*>(args.sequences[row]);
    for (int h = 0; h < args.heads; ++h) {
      float* z = out + static_cast<long>(row) * args.out_stride + h * args.head_dim;
      if (args.key_counts[row] == 0) {
        std::fill(z, z + args.head_dim, 0.0f);
        continue;
      }
      unfused_head(queries + static_cast<long>(row) * args.query_stride + h * args.head_dim,
                   args.query_positions[row], base + args.key_shift + h * args.head_dim,
                   base + args.value_shift + h * args.head_dim, args.position_stride,
                   args.key_counts[row], args.head_dim, args.scale, args.max_relative_position,
                   static_cast<const float*>(args.relative_keys),
                   static_cast<const float*>(args.relative_values),
                   args.offset_bias != nullptr
                       ? args.offset_bias + static_cast<long>(h) * args.offset_bias_width + centre
                       : nullptr,
                   z);
    }
  }
}

class FusedAttentionTest : public testing::OpTargetTest {
 protected:
  // The op on the target against the float64 definition on the same (rounded) inputs.
  void expect_definition(const AttentionCase& c) {
    SCOPED_TRACE(c.name);
    const int d = c.d(), rows = static_cast<int>(c.counts.size()), width = 2 * c.k + 1;
    long sequence_elements = 0;
    for (int r = 0; r < rows; ++r) {
      const long end = c.sequence_offsets[r] + static_cast<long>(c.counts[r]) * c.position_stride +
                       std::max(c.key_shift, c.value_shift) + d;
      sequence_elements = std::max(sequence_elements, end);
    }
    const auto sequences = random_vector(static_cast<std::size_t>(sequence_elements));
    const auto queries = random_vector(static_cast<std::size_t>(rows) * c.query_stride);
    const auto k_rel = random_vector(static_cast<std::size_t>(width) * c.head_dim);
    const auto v_rel = random_vector(k_rel.size());
    std::vector<float> bias(static_cast<std::size_t>(c.heads) * c.bias_width);  // float32 always
    for (float& x : bias) x = normal_(random_);
    // Output rows padded by 8 columns, which must keep this value (exact at every precision).
    const int out_stride = d + 8;
    const float untouched = 123.0f;

    FusedAttentionArgs shape;
    shape.rows = rows;
    shape.heads = c.heads;
    shape.head_dim = c.head_dim;
    shape.scale = c.scale > 0.0f ? c.scale : 1.0f / std::sqrt(static_cast<float>(c.head_dim));
    shape.query_stride = c.query_stride;
    shape.key_shift = c.key_shift;
    shape.value_shift = c.value_shift;
    shape.position_stride = c.position_stride;
    shape.max_relative_position = c.k;
    shape.offset_bias_width = c.bias_width;
    shape.out_stride = out_stride;

    FusedAttentionArgs host = shape;
    std::vector<const void*> host_rows;
    for (const long offset : c.sequence_offsets) host_rows.push_back(sequences.data() + offset);
    host.queries = queries.data();
    host.sequences = host_rows.data();
    host.key_counts = c.counts.data();
    host.query_positions = c.positions.data();
    host.relative_keys = c.k > 0 ? k_rel.data() : nullptr;
    host.relative_values = c.k > 0 ? v_rel.data() : nullptr;
    host.offset_bias = c.t5_bias ? bias.data() : nullptr;
    std::vector<float> expected(static_cast<std::size_t>(rows) * out_stride, untouched);
    host.out = expected.data();
    reference_fused_attention(host);

    Array t_sequences = floats(sequences), t_queries = floats(queries), t_k_rel = floats(k_rel),
          t_v_rel = floats(v_rel), t_bias = floats(bias, Precision::kFloat32),
          t_counts = ints(c.counts), t_positions = ints(c.positions);
    std::vector<std::byte> row_bytes(c.sequence_offsets.size() * sizeof(const void*));
    for (std::size_t r = 0; r < c.sequence_offsets.size(); ++r) {
      const void* row = t_sequences.at(c.sequence_offsets[r]);
      std::memcpy(&row_bytes[r * sizeof(const void*)], &row, sizeof(const void*));
    }
    Array t_rows = raw(std::move(row_bytes), sizeof(const void*));
    FusedAttentionArgs args = shape;
    args.precision = precision();
    args.queries = t_queries.data();
    args.sequences = t_rows.as<const void*>();
    args.key_counts = t_counts.as<int>();
    args.query_positions = t_positions.as<int>();
    args.relative_keys = c.k > 0 ? t_k_rel.data() : nullptr;
    args.relative_values = c.k > 0 ? t_v_rel.data() : nullptr;
    args.offset_bias = c.t5_bias ? t_bias.as<float>() : nullptr;
    // A GPU runs each of its kernels (CudaAttentionKernel), the CPU its one path.
    const bool on_cpu = GetParam().device == Device::kCpu;
    for (const CudaAttentionKernel kernel :
         {CudaAttentionKernel::kKeySplit, CudaAttentionKernel::kLaneGroups}) {
      if (on_cpu && kernel != CudaAttentionKernel::kKeySplit) continue;
      SCOPED_TRACE(on_cpu ? "cpu" : std::string(cuda_attention_kernel_name(kernel)));
      Array t_out = floats(std::vector<float>(expected.size(), untouched));
      args.out = t_out.data();
      run([&] { unfused_attention(args); },
          [&](auto stream) { fused_attention_cuda(args, stream, kernel); });
      expect_output(c, read_floats(t_out, expected.size()), expected, out_stride, untouched);
    }
  }

  void expect_output(const AttentionCase& c, const std::vector<float>& out,
                     const std::vector<float>& expected, int out_stride, float untouched) {
    const int d = c.d(), rows = static_cast<int>(c.counts.size());
    // The CPU's unfused path rounds its scores, softmax and two context GEMMs to float32 (up to
    // 5.7e-6 here, at 1,536 keys). A GPU's fused kernel is held to the definition itself:
    // tolerance's 1e-5 at float32 and 1e-2 relative at float16 and bfloat16.
    const double float32_bound = GetParam().device == Device::kCpu ? 1e-5 : 0.0;
    for (int r = 0; r < rows; ++r) {
      for (int x = 0; x < out_stride; ++x) {
        const std::size_t at = static_cast<std::size_t>(r) * out_stride + x;
        if (x >= d) {
          ASSERT_EQ(out[at], untouched) << "padding column " << x << " of row " << r;
        } else if (c.counts[r] == 0) {
          ASSERT_EQ(out[at], 0.0f) << "padding row " << r << " column " << x;
        } else {
          EXPECT_NEAR(out[at], expected[at], tolerance(expected[at], float32_bound))
              << "row " << r << " head " << x / c.head_dim << " column " << x % c.head_dim;
        }
      }
    }
  }

 private:
  // N(0, 1) values as the target holds them.
  std::vector<float> random_vector(std::size_t n) {
    std::vector<float> v(n);
    for (float& x : v) x = normal_(random_);
    return rounded(v);
  }

  std::mt19937 random_{5};
  std::normal_distribution<float> normal_{0.0f, 1.0f};
};

// Padded sequences (3 of up to 7 keys at each small head size; 2 of 40 and 75 keys, more than
// two of the GPU's 32-key tiles, with Shaw k = 16 and with T5's bias).
TEST_P(FusedAttentionTest, EncoderOverPaddedSequences) {
  for (const Heads& h : kSmallHeads) {
    AttentionCase c =
        encoder(heads_name("encoder", h), h.heads, h.head_dim, h.k, h.t5, {7, 4, 1}, 7);
    c.scale = 0.37f;
    c.bias_width = 2 * 7 + 1;
    expect_definition(c);
  }
  for (const bool t5 : {false, true}) {
    expect_definition(
        encoder(t5 ? "encoder_t5" : "encoder_shaw", 4, 64, t5 ? 0 : 16, t5, {40, 75}, 80));
  }
}

// Rows at different steps over their own caches: [rows, 40, 2, d] at each small head size, the
// queries in rows of d; and 5 rows at steps 0, 1, 31, 32, 63 (either side of the GPU's tiles)
// over QKV rows of 3 d.
TEST_P(FusedAttentionTest, DecoderRowsOverTheirCachesAtDifferentSteps) {
  for (const Heads& h : kSmallHeads) {
    AttentionCase c =
        decoder(heads_name("decoder", h), h.heads, h.head_dim, h.k, h.t5, {0, 5, 39, 17}, 40, 1, 0);
    c.scale = 0.25f;
    c.query_stride = c.d();
    c.bias_width = 2 * 40 + 1;
    expect_definition(c);
  }
  AttentionCase qkv_rows = over_qkv_rows("decoder_cache", 3, 24, 4, false);
  const int steps[] = {0, 1, 31, 32, 63};
  for (int r = 0; r < 5; ++r) add_row(qkv_rows, r * 64L * 3 * qkv_rows.d(), steps[r] + 1, steps[r]);
  expect_definition(qkv_rows);
}

// Beams of a sentence share its memory (the same base pointer), no relative terms: 2 beams of
// one sentence and 1 of another reading layer 1 of a 3-layer memory [positions, layers, 2, d];
// 4 beams over 33 keys and 2 over 5.
TEST_P(FusedAttentionTest, CrossAttentionBeamsShareTheirSentenceMemory) {
  const int heads = 2, head_dim = 8, d = heads * head_dim, layers = 3, layer = 1;
  AttentionCase layered{.name = "cross_layer_1_of_3",
                        .heads = heads,
                        .head_dim = head_dim,
                        .scale = 0.5f,
                        .query_stride = d,
                        .position_stride = layers * 2 * d,
                        .key_shift = layer * 2 * d,
                        .value_shift = layer * 2 * d + d,
                        .sequence_offsets = {0, 0, 6L * layers * 2 * d},
                        .counts = {6, 6, 2},
                        .positions = {3, 3, 0}};
  expect_definition(layered);

  AttentionCase shared = over_qkv_rows("cross_shared_memory", 2, 16, 0, false);
  shared.position_stride = 4 * shared.d();
  for (int r = 0; r < 6; ++r) {
    add_row(shared, r < 4 ? 0 : 40L * shared.position_stride, r < 4 ? 33 : 5, 7);
  }
  expect_definition(shared);
}

// The largest head sizes over long inputs: decoder rows past 1,024 keys in the cache's real
// layout (layer 1 of 2, capacity 1,536), and encoder queries over a 1,030-key sequence.
TEST_P(FusedAttentionTest, LongSequencesAtTheLargestHeadSizes) {
  for (const int head_dim : {128, 256}) {
    const std::string size = "_hd" + std::to_string(head_dim);
    expect_definition(decoder("decoder_1536_keys" + size, 2, head_dim, 16, false,
                              {1023, 1024, 1535}, 1536, 2, 1));
    AttentionCase long_encoder = over_qkv_rows("encoder_1030_keys" + size, 2, head_dim, 16, false);
    for (const int position : {0, 1, 511, 1000, 1029}) add_row(long_encoder, 0, 1030, position);
    expect_definition(long_encoder);
  }
}

// Heads a 16-byte chunk does not divide and rows that are not 16-byte aligned, which a GPU's
// lane-group kernel reads element by element: 3 heads of 20 (a 16-bit chunk of 8 cut short at
// the head's end; heads 1 and 2 start off alignment) over aligned caches, then the same rows at
// odd offsets and odd strides (queries, keys, values).
TEST_P(FusedAttentionTest, RaggedHeadsAndUnalignedRows) {
  AttentionCase aligned = decoder("ragged_20", 3, 20, 4, false, {0, 6, 33}, 40, 1, 0);
  aligned.query_stride = aligned.d();
  expect_definition(aligned);

  const int d = 3 * 20;
  AttentionCase odd{.name = "unaligned_20",
                    .heads = 3,
                    .head_dim = 20,
                    .k = 4,
                    .scale = 0.3f,
                    .query_stride = 3 * d + 3,
                    .position_stride = 2 * d + 1,
                    .key_shift = 1,
                    .value_shift = d + 2};
  const int steps[] = {0, 6, 33};
  for (int r = 0; r < 3; ++r)
    add_row(odd, r * 40L * odd.position_stride + r, steps[r] + 1, steps[r]);
  expect_definition(odd);
}

RPT_OP_TARGET_INSTANCES(FusedAttentionTest, testing::op_targets());

}  // namespace
}  // namespace rpt::kernels
