// The CUDA ops tested on the GPU alone, against their CPU definition (GEMM, CUDA graphs) or their
// reference (the fused attention: tests/support/reference_kernels.h). float32: 1e-5 (GEMM 1e-4: a
// different summation order over k). float16 and bfloat16: the inputs are rounded to the type on
// the host, the CPU runs in float32 on the rounded values, and the device result may differ by
// the rounding of its output (1e-2 relative). Skips, visibly, without a GPU. The ops tested on
// every device (norms, activations, embedding, top-k, the cache ops) are compiled into this
// binary from their own files (tests/support/op_targets.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "engine/dtype.h"
#include "kernels/activation.h"
#include "kernels/cuda/cublas_handle.h"
#include "kernels/cuda/cuda_graph.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/errors.h"
#include "kernels/fused_attention.h"
#include "kernels/gemm.h"
#include "tests/support/reference_kernels.h"
#include "tests/support/gpu_required.h"
#include "tests/support/precision_storage.h"

namespace rpt::kernels {
namespace {

using testing::from_storage;
using testing::rounded;
using testing::to_storage;

class CudaOpsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RPT_SKIP_WITHOUT_GPU("GPU parity");
    stream_ = std::make_unique<CudaStreamOwner>();
  }

  template <typename T>
  DeviceBuffer upload(const std::vector<T>& host) {
    DeviceBuffer buffer(host.size() * sizeof(T), stream_->get());
    buffer.copy_from_host(host.data(), host.size() * sizeof(T));
    return buffer;
  }
  template <typename T>
  std::vector<T> download(const DeviceBuffer& buffer, std::size_t count) {
    std::vector<T> host(count);
    buffer.copy_to_host(host.data(), count * sizeof(T));
    return host;
  }
  DeviceBuffer upload_as(const std::vector<float>& values, Precision precision) {
    return upload(to_storage(values, precision));
  }
  std::vector<float> download_as(const DeviceBuffer& buffer, std::size_t count,
                                 Precision precision) {
    return from_storage(download<std::byte>(buffer, count * precision_size(precision)), precision);
  }
  std::vector<float> random_vector(std::size_t n, float scale = 1.0f) {
    std::normal_distribution<float> normal(0.0f, scale);
    std::vector<float> v(n);
    for (float& x : v) x = normal(random_);
    return v;
  }
  static void expect_near(const std::vector<float>& a, const std::vector<float>& b, double tol) {
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], tol) << "at " << i;
  }
  // float32: `float32_tolerance`; float16 and bfloat16: 1e-2 relative to max(1, |expected|).
  static void expect_close(const std::vector<float>& actual, const std::vector<float>& expected,
                           Precision precision, double float32_tolerance = 1e-5) {
    ASSERT_EQ(actual.size(), expected.size());
    for (std::size_t i = 0; i < actual.size(); ++i) {
      const double tolerance =
          precision == Precision::kFloat32
              ? float32_tolerance
              : 1e-2 * std::max(1.0, std::abs(static_cast<double>(expected[i])));
      EXPECT_NEAR(actual[i], expected[i], tolerance) << "at " << i;
    }
  }

  std::unique_ptr<CudaStreamOwner> stream_;
  std::mt19937 random_{5};
};

struct GemmCase {
  Precision input;
  Precision output;
};

void PrintTo(const GemmCase& c, std::ostream* out) {
  *out << precision_name(c.input) << "_to_" << precision_name(c.output);
}

std::string gemm_test_name(const ::testing::TestParamInfo<GemmCase>& info) {
  return std::string(precision_name(info.param.input)) + "_to_" +
         std::string(precision_name(info.param.output));
}

class CudaGemmTest : public CudaOpsTest, public ::testing::WithParamInterface<GemmCase> {};

// Both ways of choosing kernels against the CPU. cuBLAS's heuristic takes any shape; the frozen
// (batch-invariant) algorithms need 16-byte aligned row strides, hence the second shape.
TEST_P(CudaGemmTest, AllTranspositionsWithAndWithoutAccumulation) {
  const GemmCase c = GetParam();
  for (const GemmAlgorithm algorithm :
       {GemmAlgorithm::kHeuristic, GemmAlgorithm::kBatchInvariant}) {
    CublasHandle handle(stream_->get(), algorithm);
    const bool invariant = algorithm == GemmAlgorithm::kBatchInvariant;
    const int m = invariant ? 16 : 9, n = invariant ? 24 : 13, k = invariant ? 40 : 21;
    for (const bool ta : {false, true}) {
      for (const bool tb : {false, true}) {
        for (const float beta : {0.0f, 1.0f}) {
          SCOPED_TRACE(::testing::Message()
                       << (invariant ? "batch-invariant" : "heuristic") << " transpose_a " << ta
                       << " transpose_b " << tb << " beta " << beta);
          const auto a = rounded(random_vector(m * k), c.input);
          const auto b = rounded(random_vector(k * n), c.input);
          const auto initial_c = rounded(random_vector(m * n), c.output);
          std::vector<float> expected = initial_c;
          gemm_cpu({.transpose_a = ta,
                    .transpose_b = tb,
                    .m = m,
                    .n = n,
                    .k = k,
                    .alpha = 0.5f,
                    .a = a.data(),
                    .lda = ta ? m : k,
                    .b = b.data(),
                    .ldb = tb ? k : n,
                    .beta = beta,
                    .c = expected.data(),
                    .ldc = n});
          auto da = upload_as(a, c.input), db = upload_as(b, c.input),
               dc = upload_as(initial_c, c.output);
          gemm_cuda({.input_precision = c.input,
                     .output_precision = c.output,
                     .transpose_a = ta,
                     .transpose_b = tb,
                     .m = m,
                     .n = n,
                     .k = k,
                     .alpha = 0.5f,
                     .a = da.data(),
                     .lda = ta ? m : k,
                     .b = db.data(),
                     .ldb = tb ? k : n,
                     .beta = beta,
                     .c = dc.data(),
                     .ldc = n},
                    &handle);
          expect_close(download_as(dc, initial_c.size(), c.output), expected, c.output, 1e-4);
        }
      }
    }
  }
}

// The engine's GEMMs (y = x W^T at the demo models' shapes): with frozen algorithms, every row of
// a sub-batch is bit for bit the row of the whole batch, at any row count and offset. cuBLAS's
// heuristic is the control: its mismatches are printed, not asserted.
TEST_P(CudaGemmTest, FrozenAlgorithmRowsDoNotDependOnTheRowCount) {
  const GemmCase c = GetParam();
  // Past 512 rows: on Hopper the first float16 candidates at 128 rows refuse 512 (gemm_cuda.cc).
  const int total = 1100;
  const int row_counts[] = {1,  2,  3,   4,   5,   7,   8,   9,   16,  17,  31,  32,   33,  63,
                            64, 65, 127, 128, 129, 200, 255, 256, 257, 511, 512, 1000, 1100};
  for (const auto& [n, k] : {std::pair{768, 256}, std::pair{256, 1024}, std::pair{8000, 256}}) {
    // Values of wide range, so that a different summation order shows in the last bits.
    std::vector<float> x = random_vector(static_cast<std::size_t>(total) * k);
    for (std::size_t i = 0; i < x.size(); i += 7) x[i] *= 100.0f;
    auto dx = upload_as(rounded(x, c.input), c.input);
    auto dw = upload_as(rounded(random_vector(static_cast<std::size_t>(n) * k), c.input), c.input);
    const std::size_t in_row = static_cast<std::size_t>(k) * precision_size(c.input);
    const std::size_t out_row = static_cast<std::size_t>(n) * precision_size(c.output);
    for (const GemmAlgorithm algorithm :
         {GemmAlgorithm::kBatchInvariant, GemmAlgorithm::kHeuristic}) {
      CublasHandle handle(stream_->get(), algorithm);
      const auto run = [&](int first, int m, DeviceBuffer& out) {
        gemm_cuda({.input_precision = c.input,
                   .output_precision = c.output,
                   .transpose_b = true,
                   .m = m,
                   .n = n,
                   .k = k,
                   .a = static_cast<const std::byte*>(dx.data()) + first * in_row,
                   .lda = k,
                   .b = dw.data(),
                   .ldb = k,
                   .c = out.data(),
                   .ldc = n},
                  &handle);
      };
      DeviceBuffer whole(total * out_row, stream_->get());
      run(0, total, whole);
      const auto expected = download<std::byte>(whole, total * out_row);
      int mismatched_calls = 0;
      for (const int m : row_counts) {
        for (const int first : {0, total - m}) {
          DeviceBuffer part(m * out_row, stream_->get());
          run(first, m, part);
          const auto got = download<std::byte>(part, m * out_row);
          const bool same =
              std::memcmp(got.data(), expected.data() + first * out_row, m * out_row) == 0;
          mismatched_calls += same ? 0 : 1;
          if (algorithm == GemmAlgorithm::kBatchInvariant) {
            EXPECT_TRUE(same) << "n " << n << " k " << k << ": rows " << first << ".."
                              << first + m - 1 << " differ from the same rows of " << total;
          }
        }
      }
      std::printf("gemm n %d k %d %s: %s, %d of %zu sub-batches differ from the whole batch\n", n,
                  k, gemm_test_name(::testing::TestParamInfo<GemmCase>(c, 0)).c_str(),
                  algorithm == GemmAlgorithm::kBatchInvariant ? "frozen" : "heuristic",
                  mismatched_calls, 2 * std::size(row_counts));
    }
  }
}

// y [m, n] = x [m, k] w^T in float32 (the graph tests' work).
void linear_float32(const DeviceBuffer& x, const DeviceBuffer& w, DeviceBuffer& y, int m, int n,
                    int k, CublasHandle& handle) {
  gemm_cuda({.input_precision = Precision::kFloat32,
             .output_precision = Precision::kFloat32,
             .transpose_b = true,
             .m = m,
             .n = n,
             .k = k,
             .a = x.data(),
             .lda = k,
             .b = w.data(),
             .ldb = k,
             .c = y.data(),
             .ldc = n},
            &handle);
}

// A captured GEMM + bias + ReLU replays what the eager calls compute, bit for bit, on inputs
// rewritten between launches (with both ways of choosing GEMM kernels).
TEST_F(CudaOpsTest, GraphReplaysCapturedWorkOnNewInputs) {
  const int m = 8, n = 24, k = 40;
  const auto weight = random_vector(static_cast<std::size_t>(n) * k);
  const auto bias = random_vector(n);
  const std::vector<std::vector<float>> inputs = {random_vector(static_cast<std::size_t>(m) * k),
                                                  random_vector(static_cast<std::size_t>(m) * k)};
  auto dw = upload(weight), db = upload(bias);
  auto dx = upload(inputs[0]);
  DeviceBuffer dy(static_cast<std::size_t>(m) * n * sizeof(float), stream_->get());
  for (const GemmAlgorithm algorithm :
       {GemmAlgorithm::kBatchInvariant, GemmAlgorithm::kHeuristic}) {
    CublasHandle handle(stream_->get(), algorithm);
    const auto work = [&] {
      linear_float32(dx, dw, dy, m, n, k, handle);
      bias_activation_cuda({.precision = Precision::kFloat32,
                            .x = dy.data(),
                            .bias = db.data(),
                            .rows = m,
                            .cols = n,
                            .activation = ActivationKind::kRelu},
                           stream_->get());
    };
    std::vector<std::vector<float>> expected;
    for (const auto& x : inputs) {
      dx.copy_from_host(x.data(), x.size() * sizeof(float));
      work();
      expected.push_back(download<float>(dy, static_cast<std::size_t>(m) * n));
    }
    EXPECT_NE(expected[0], expected[1]);
    const CudaGraph graph = CudaGraph::capture(stream_->get(), work);
    ASSERT_TRUE(graph);
    for (int round = 0; round < 2; ++round) {
      for (std::size_t i = 0; i < inputs.size(); ++i) {
        dx.copy_from_host(inputs[i].data(), inputs[i].size() * sizeof(float));
        dy.fill_zero();
        graph.launch(stream_->get());
        EXPECT_EQ(download<float>(dy, static_cast<std::size_t>(m) * n), expected[i])
            << "input " << i << ", round " << round;
      }
    }
  }
}

// Work that throws during capture, or that CUDA cannot capture (a synchronous copy), leaves the
// stream usable. (CUDA reports the refused calls as API errors: compute-sanitizer's runs leave
// this test out.)
TEST_F(CudaOpsTest, GraphCaptureRefusalLeavesTheStreamUsable) {
  const int m = 8, n = 24, k = 40;
  const auto weight = random_vector(static_cast<std::size_t>(n) * k);
  const auto input = random_vector(static_cast<std::size_t>(m) * k);
  auto dw = upload(weight), dx = upload(input);
  DeviceBuffer dy(static_cast<std::size_t>(m) * n * sizeof(float), stream_->get());
  EXPECT_THROW(
      CudaGraph::capture(stream_->get(), [] { RPT_THROW(InvalidArgument, "refused by the test"); }),
      InvalidArgument);
  std::vector<float> host(4);
  EXPECT_THROW(
      CudaGraph::capture(stream_->get(), [&] { dy.copy_to_host(host.data(), host.size() * 4); }),
      RuntimeFailure);
  // The stream still runs eager work.
  CublasHandle handle(stream_->get());
  linear_float32(dx, dw, dy, m, n, k, handle);
  const auto after = download<float>(dy, static_cast<std::size_t>(m) * n);
  std::vector<float> reference(static_cast<std::size_t>(m) * n, 0.0f);
  gemm_cpu({.transpose_b = true,
            .m = m,
            .n = n,
            .k = k,
            .a = input.data(),
            .lda = k,
            .b = weight.data(),
            .ldb = k,
            .c = reference.data(),
            .ldc = n});
  expect_near(after, reference, 1e-4);
}

INSTANTIATE_TEST_SUITE_P(Precisions, CudaGemmTest,
                         ::testing::Values(GemmCase{Precision::kFloat32, Precision::kFloat32},
                                           GemmCase{Precision::kFloat16, Precision::kFloat16},
                                           GemmCase{Precision::kFloat16, Precision::kFloat32},
                                           GemmCase{Precision::kBFloat16, Precision::kBFloat16},
                                           GemmCase{Precision::kBFloat16, Precision::kFloat32}),
                         gemm_test_name);

// Checked before any cuBLAS call, so it runs without a device.
TEST(GemmCudaArgsCheck, RefusesPrecisionPairsCublasCannotRun) {
  for (const GemmCase c : {GemmCase{Precision::kFloat32, Precision::kFloat16},
                           GemmCase{Precision::kFloat16, Precision::kBFloat16},
                           GemmCase{Precision::kBFloat16, Precision::kFloat16}}) {
    EXPECT_THROW(
        gemm_cuda(
            {.input_precision = c.input, .output_precision = c.output, .m = 1, .n = 1, .k = 1},
            nullptr),
        InvalidArgument);
  }
}

// The fused attention on the device against its CPU definition. One buffer holds every sequence
// the rows read; each row names its sequence by an offset (host pointers for the CPU, device
// pointers for the GPU). Three shapes: encoder rows over padded sequences (Shaw or T5),
// decoder rows over their own caches at different steps, beams sharing a sentence's memory.
struct AttentionShape {
  const char* name;
  int heads, head_dim, k;
  bool t5_bias;
  int position_stride_factor;          // position stride = factor * d (d = heads * head_dim)
  std::vector<long> sequence_offsets;  // per row, in elements
  std::vector<int> counts;             // per row
  std::vector<int> positions;          // per row
  // Where K and V sit from a row's sequence address, in elements: d and 2 d in a QKV row
  // (the encoder); layer * capacity * 2 d and that + d in the decoder cache [layers, capacity,
  // 2, d] with position stride 2 d.
  long key_shift = -1, value_shift = -1;  // -1: d and 2 d
};

class CudaFusedAttentionTest
    : public CudaOpsTest,
      public ::testing::WithParamInterface<std::tuple<AttentionShape, Precision>> {};

TEST_P(CudaFusedAttentionTest, MatchesCpuDefinition) {
  const auto& [shape, precision] = GetParam();
  const int d = shape.heads * shape.head_dim;
  const int rows = static_cast<int>(shape.counts.size());
  const int stride = shape.position_stride_factor * d;
  const int width = 2 * shape.k + 1;
  const long key_shift = shape.key_shift >= 0 ? shape.key_shift : d;
  const long value_shift = shape.value_shift >= 0 ? shape.value_shift : 2L * d;
  long sequence_elements = 0;
  for (std::size_t r = 0; r < shape.counts.size(); ++r) {
    const long end = shape.sequence_offsets[r] + static_cast<long>(shape.counts[r]) * stride +
                     std::max(key_shift, value_shift) + d;
    sequence_elements = std::max(sequence_elements, end);
  }
  // Inputs as the device will see them (rounded to the precision), the CPU in float32 on those.
  const auto sequences =
      rounded(random_vector(static_cast<std::size_t>(sequence_elements)), precision);
  // Queries inside [rows, 3 d] QKV rows and keys/values shifted within each position, as the
  // engine lays them out; output rows padded, the padding never written.
  const int query_stride = 3 * d;
  const int out_stride = d + 8;
  const float untouched = 123.0f;  // exact in float16 and bfloat16
  const auto queries =
      rounded(random_vector(static_cast<std::size_t>(rows) * query_stride), precision);
  const auto k_rel =
      rounded(random_vector(static_cast<std::size_t>(width) * shape.head_dim), precision);
  const auto v_rel = rounded(random_vector(k_rel.size()), precision);
  const int bias_width = 2 * 128 + 1;  // offsets up to ±128 (positions < 80)
  const auto bias = random_vector(static_cast<std::size_t>(shape.heads) * bias_width);

  FusedAttentionArgs args;
  args.rows = rows;
  args.heads = shape.heads;
  args.head_dim = shape.head_dim;
  args.scale = 1.0f / std::sqrt(static_cast<float>(shape.head_dim));
  args.query_stride = query_stride;
  args.key_shift = key_shift;
  args.value_shift = value_shift;
  args.position_stride = stride;
  args.max_relative_position = shape.k;
  args.offset_bias_width = bias_width;
  args.out_stride = out_stride;

  std::vector<const void*> host_rows;
  for (long offset : shape.sequence_offsets) host_rows.push_back(sequences.data() + offset);
  FusedAttentionArgs cpu = args;
  cpu.queries = queries.data();
  cpu.sequences = host_rows.data();
  cpu.key_counts = shape.counts.data();
  cpu.query_positions = shape.positions.data();
  cpu.relative_keys = shape.k > 0 ? k_rel.data() : nullptr;
  cpu.relative_values = shape.k > 0 ? v_rel.data() : nullptr;
  cpu.offset_bias = shape.t5_bias ? bias.data() : nullptr;
  std::vector<float> expected(static_cast<std::size_t>(rows) * out_stride, untouched);
  cpu.out = expected.data();
  reference_fused_attention(cpu);

  auto d_sequences = upload_as(sequences, precision);
  auto d_queries = upload_as(queries, precision);
  auto d_k_rel = upload_as(k_rel, precision);
  auto d_v_rel = upload_as(v_rel, precision);
  auto d_bias = upload(bias);
  auto d_counts = upload(shape.counts);
  auto d_positions = upload(shape.positions);
  std::vector<const void*> device_rows;
  for (long offset : shape.sequence_offsets) {
    device_rows.push_back(static_cast<const std::byte*>(d_sequences.data()) +
                          offset * static_cast<long>(precision_size(precision)));
  }
  auto d_rows = upload(device_rows);
  auto d_out = upload_as(std::vector<float>(expected.size(), untouched), precision);
  FusedAttentionArgs gpu = args;
  gpu.precision = precision;
  gpu.queries = d_queries.data();
  gpu.sequences = d_rows.as<const void*>();
  gpu.key_counts = d_counts.as<int>();
  gpu.query_positions = d_positions.as<int>();
  gpu.relative_keys = shape.k > 0 ? d_k_rel.data() : nullptr;
  gpu.relative_values = shape.k > 0 ? d_v_rel.data() : nullptr;
  gpu.offset_bias = shape.t5_bias ? d_bias.as<float>() : nullptr;
  gpu.out = d_out.data();
  fused_attention_cuda(gpu, stream_->get());
  expect_close(download_as(d_out, expected.size(), precision), expected, precision);
}

std::vector<AttentionShape> attention_shapes() {
  std::vector<AttentionShape> shapes;
  // Encoder: 2 sequences of 40 and 75 keys (more than two 32-key tiles), Shaw k = 16 and T5.
  for (bool t5 : {false, true}) {
    AttentionShape s{t5 ? "encoder_t5" : "encoder_shaw", 4, 64, t5 ? 0 : 16, t5, 3, {}, {}, {}};
    for (int b = 0; b < 2; ++b) {
      const int n = b == 0 ? 40 : 75;
      for (int i = 0; i < 80; ++i) {
        s.sequence_offsets.push_back(static_cast<long>(b) * 80 * 3 * 256);
        s.counts.push_back(i < n ? n : 0);
        s.positions.push_back(i);
      }
    }
    shapes.push_back(s);
  }
  // Decoder: rows over their own caches at steps 0, 1, 31, 32, 63 (stride 3 d), head_dim 24.
  AttentionShape decoder{"decoder_cache", 3, 24, 4, false, 3, {}, {}, {}};
  const int steps[] = {0, 1, 31, 32, 63};
  for (int r = 0; r < 5; ++r) {
    decoder.sequence_offsets.push_back(static_cast<long>(r) * 64 * 3 * 72);
    decoder.counts.push_back(steps[r] + 1);
    decoder.positions.push_back(steps[r]);
  }
  shapes.push_back(decoder);
  // Cross-attention: 4 beams share one memory of 33 keys, 2 beams another of 5; no relative.
  AttentionShape cross{"cross_shared_memory", 2, 16, 0, false, 4, {}, {}, {}};
  for (int r = 0; r < 6; ++r) {
    cross.sequence_offsets.push_back(r < 4 ? 0 : 40L * 4 * 32);
    cross.counts.push_back(r < 4 ? 33 : 5);
    cross.positions.push_back(7);
  }
  shapes.push_back(cross);
  // Long inputs at the largest head sizes: decoder rows past 1,024 keys in the cache's real
  // layout (layer 1 of 2, capacity 1,536), and encoder queries over a 1,030-key sequence.
  for (int head_dim : {128, 256}) {
    const int heads = 2, d = heads * head_dim, capacity = 1536;
    AttentionShape long_decoder{
        head_dim == 128 ? "decoder_1536_keys_hd128" : "decoder_1536_keys_hd256",
        heads,
        head_dim,
        16,
        false,
        2,
        {},
        {},
        {}};
    long_decoder.key_shift = 2L * capacity * d;  // layer 1
    long_decoder.value_shift = long_decoder.key_shift + d;
    const int long_steps[] = {1023, 1024, 1535};
    for (int r = 0; r < 3; ++r) {
      long_decoder.sequence_offsets.push_back(static_cast<long>(r) * 2 * 2 * capacity * d);
      long_decoder.counts.push_back(long_steps[r] + 1);
      long_decoder.positions.push_back(long_steps[r]);
    }
    shapes.push_back(long_decoder);
    AttentionShape long_encoder{
        head_dim == 128 ? "encoder_1030_keys_hd128" : "encoder_1030_keys_hd256",
        heads,
        head_dim,
        16,
        false,
        3,
        {},
        {},
        {}};
    for (int position : {0, 1, 511, 1000, 1029}) {
      long_encoder.sequence_offsets.push_back(0);
      long_encoder.counts.push_back(1030);
      long_encoder.positions.push_back(position);
    }
    shapes.push_back(long_encoder);
  }
  return shapes;
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, CudaFusedAttentionTest,
    ::testing::Combine(::testing::ValuesIn(attention_shapes()),
                       ::testing::Values(Precision::kFloat32, Precision::kFloat16,
                                         Precision::kBFloat16)),
    [](const ::testing::TestParamInfo<std::tuple<AttentionShape, Precision>>& shape_info) {
      return std::string(std::get<0>(shape_info.param).name) + "_" +
             std::string(precision_name(std::get<1>(shape_info.param)));
    });

}  // namespace
}  // namespace rpt::kernels
