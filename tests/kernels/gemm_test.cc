// The GEMM (kernels/gemm.h) on each device (tests/support/op_targets.h), each way the device runs
// it: the CPU serial and split across two threads; a GPU with cuBLAS's heuristic and with the
// frozen, batch-invariant algorithms, each input precision writing its own precision and float32.
// Against a float64 loop: few rows and many, odd widths (the CPU's last column comes from dot
// products), every transpose combination, leading dimensions as tight as the matrices and wider,
// alpha and beta (beta 0 overwrites C, NaN included); within 5x the float32 rounding expected of
// k additions (observed on the CPU: under 1.5x). Then the engine's shapes: a row of C does not
// depend on the row count. The CPU's row invariance at more shapes: gemm_invariance_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kernels/errors.h"
#include "kernels/gemm.h"
#include "kernels/parallel.h"
#include "tests/support/op_targets.h"

#if RPT_OP_TESTS_ON_CUDA
#include "kernels/cuda/cublas_handle.h"
#endif

namespace rpt::kernels {
namespace {

struct Shape {
  int m, n, k;
};

struct Reference {
  std::vector<double> c;
  // Per element, the float32 rounding a GEMM may add: sqrt(k) eps |alpha| ||a_i . b_j||_2 (the
  // random-walk size of k rounded additions of these products) plus eps of the result.
  std::vector<double> rounding;
};

// C = alpha op(A) op(B) + beta C in float64, A and B (host float32) stored row-major with the
// given strides.
Reference reference(const GemmCudaArgs& args, const std::vector<float>& c_before) {
  const auto* a_values = static_cast<const float*>(args.a);
  const auto* b_values = static_cast<const float*>(args.b);
  Reference out{.c = {c_before.begin(), c_before.end()},
                .rounding = std::vector<double>(c_before.size(), 0.0)};
  const double eps = std::numeric_limits<float>::epsilon();
  for (int i = 0; i < args.m; ++i) {
    for (int j = 0; j < args.n; ++j) {
      double sum = 0.0;
      double squares = 0.0;
      for (int p = 0; p < args.k; ++p) {
        const float a = a_values[args.transpose_a ? p * args.lda + i : i * args.lda + p];
        const float b = b_values[args.transpose_b ? j * args.ldb + p : p * args.ldb + j];
        const double product = static_cast<double>(a) * b;
        sum += product;
        squares += product * product;
      }
      const std::size_t at = static_cast<std::size_t>(i) * args.ldc + j;
      double& c = out.c[at];
      c = args.alpha * sum + (args.beta == 0.0f ? 0.0 : args.beta * c);
      out.rounding[at] = eps * (std::sqrt(args.k * squares) * std::abs(args.alpha) + std::abs(c));
    }
  }
  return out;
}

// A way a device runs GEMMs.
struct GemmWay {
  const char* name;
  int cpu_threads = 0;  // the CPU's
  bool frozen = false;  // a GPU's: the frozen algorithms (GemmAlgorithm::kBatchInvariant)
};

class GemmTest : public testing::OpTargetTest {
 protected:
  void TearDown() override { set_cpu_threads(0); }

  bool on_cpu() const { return GetParam().device == Device::kCpu; }
  std::vector<GemmWay> ways() const {
    if (on_cpu()) {
      return {{.name = "1 thread", .cpu_threads = 1}, {.name = "2 threads", .cpu_threads = 2}};
    }
    return {{.name = "heuristic"}, {.name = "frozen", .frozen = true}};
  }
  // Whether every row of C is the same whatever the row count: on the CPU always, on a GPU with
  // the frozen algorithms.
  bool batch_invariant(const GemmWay& way) const { return on_cpu() || way.frozen; }
  // The precisions C is written in: the inputs' and float32 (the CPU: float32 alone).
  std::vector<Precision> outputs() const {
    if (precision() == Precision::kFloat32) return {Precision::kFloat32};
    return {precision(), Precision::kFloat32};
  }

  // `args` (pointers into the target's arrays) on the target, the way `way` runs it.
  void gemm(const GemmCudaArgs& args, const GemmWay& way) {
    run(
        [&] {
          set_cpu_threads(way.cpu_threads);
          gemm_cpu({.transpose_a = args.transpose_a,
                    .transpose_b = args.transpose_b,
                    .m = args.m,
                    .n = args.n,
                    .k = args.k,
                    .alpha = args.alpha,
                    .a = static_cast<const float*>(args.a),
                    .lda = args.lda,
                    .b = static_cast<const float*>(args.b),
                    .ldb = args.ldb,
                    .beta = args.beta,
                    .c = static_cast<float*>(args.c),
                    .ldc = args.ldc});
        },
        [&](auto stream) { gemm_on_gpu(args, way, stream); });
  }

  // `shape` on the target, the way `way` runs it, against the float64 loop on random inputs (C of
  // NaN where beta is 0: it must be overwritten); the padding between rows of C is never written.
  // Returns the largest error in units of the expected float32 rounding (0 for other outputs).
  double expect_float64(const GemmCudaArgs& shape, const GemmWay& way) {
    const Precision output = shape.output_precision;
    const std::string what =
        std::string(way.name) + " to " + std::string(precision_name(output)) + ": m " +
        std::to_string(shape.m) + " n " + std::to_string(shape.n) + " k " +
        std::to_string(shape.k) + " lda " + std::to_string(shape.lda) + " ldb " +
        std::to_string(shape.ldb) + " ldc " + std::to_string(shape.ldc) + " ta " +
        std::to_string(shape.transpose_a) + " tb " + std::to_string(shape.transpose_b) + " beta " +
        std::to_string(shape.beta);
    const int m = shape.m, n = shape.n, k = shape.k, ldc = shape.ldc;
    std::vector<float> a(static_cast<std::size_t>(shape.transpose_a ? k : m) * shape.lda);
    std::vector<float> b(static_cast<std::size_t>(shape.transpose_b ? n : k) * shape.ldb);
    std::vector<float> c(static_cast<std::size_t>(m) * ldc);
    for (float& x : a) x = normal_(random_);
    for (float& x : b) x = normal_(random_);
    for (float& x : c) {
      x = shape.beta == 0.0f ? std::numeric_limits<float>::quiet_NaN() : normal_(random_);
    }
    a = rounded(a);
    b = rounded(b);
    c = testing::rounded(c, output);
    std::vector<float> before = c;
    if (shape.beta == 0.0f) std::fill(before.begin(), before.end(), 0.0f);
    GemmCudaArgs host = shape;
    host.a = a.data();
    host.b = b.data();
    const Reference expected = reference(host, before);

    Array target_a = floats(a), target_b = floats(b), target_c = floats(c, output);
    GemmCudaArgs args = shape;
    args.a = target_a.data();
    args.b = target_b.data();
    args.c = target_c.data();
    gemm(args, way);
    const std::vector<float> got = read_floats(target_c, c.size());
    double worst = 0.0;
    for (int i = 0; i < m; ++i) {
      for (int j = 0; j < n; ++j) {
        const std::size_t at = static_cast<std::size_t>(i) * ldc + j;
        if (output == Precision::kFloat32) {
          worst = std::max(worst, std::abs(got[at] - expected.c[at]) / expected.rounding[at]);
        }
        EXPECT_NEAR(got[at], expected.c[at],
                    tolerance(expected.c[at], 5 * expected.rounding[at] + 1e-30, output))
            << what << " at (" << i << ", " << j << ")";
        if (HasFailure()) return worst;
      }
      for (int j = n; j < ldc && i + 1 < m; ++j) {
        const std::size_t at = static_cast<std::size_t>(i) * ldc + j;
        if (shape.beta == 0.0f) {
          EXPECT_TRUE(std::isnan(got[at])) << what << ": padding at (" << i << ", " << j << ")";
        } else {
          EXPECT_EQ(got[at], c[at]) << what << ": padding at (" << i << ", " << j << ")";
        }
        if (HasFailure()) return worst;
      }
    }
    return worst;
  }

  std::mt19937 random_{5};
  std::normal_distribution<float> normal_;

 private:
  // One handle per way for the whole test, as the engine keeps one: the frozen algorithm of a
  // shape is chosen at its first call and reused.
  void gemm_on_gpu([[maybe_unused]] const GemmCudaArgs& args, [[maybe_unused]] const GemmWay& way,
                   [[maybe_unused]] CudaStream stream) {
#if RPT_OP_TESTS_ON_CUDA
    std::unique_ptr<CublasHandle>& handle = handles_[way.frozen ? 1 : 0];
    if (handle == nullptr) {
      handle = std::make_unique<CublasHandle>(
          stream, way.frozen ? GemmAlgorithm::kBatchInvariant : GemmAlgorithm::kHeuristic);
    }
    gemm_cuda(args, handle.get());
#endif
  }

#if RPT_OP_TESTS_ON_CUDA
  std::unique_ptr<CublasHandle> handles_[2];  // heuristic, frozen
#endif
};

// Whether a row stride of `ld` elements of `precision` is 16-byte aligned.
bool aligned(int ld, Precision precision) {
  return static_cast<std::size_t>(ld) * precision_size(precision) % 16 == 0;
}

TEST_P(GemmTest, MatchesFloat64ForFewAndManyRowsAndEveryTranspose) {
  // Few rows through many, k above and below 512, a vocabulary-sized n that the CPU's threads
  // split by columns, and m > n that they split by rows; the GPU's shapes of odd and of 16-byte
  // aligned widths.
  const Shape shapes[] = {{1, 33, 17},  {4, 700, 256},  {8, 96, 1024}, {32, 70, 300}, {16, 40, 600},
                          {17, 50, 64}, {40, 2000, 96}, {300, 20, 48}, {9, 13, 21},   {16, 24, 40},
                          {4, 33, 0},   {40, 20, 0}};  // k = 0: C = beta C
  double worst = 0.0;  // the largest float32 error in units of the expected rounding
  for (const Precision output : outputs()) {
    for (const GemmWay& way : ways()) {
      for (const Shape& s : shapes) {
        for (const int pad : {0, 3}) {  // leading dimensions as tight as BLAS allows, and wider
          for (const int transposes : {0, 1, 2, 3}) {
            for (const float beta : {0.0f, 1.0f}) {
              const bool ta = (transposes & 1) != 0, tb = (transposes & 2) != 0;
              const GemmCudaArgs shape{.input_precision = precision(),
                                       .output_precision = output,
                                       .transpose_a = ta,
                                       .transpose_b = tb,
                                       .m = s.m,
                                       .n = s.n,
                                       .k = s.k,
                                       .alpha = 0.5f,
                                       .lda = std::max(1, ta ? s.m : s.k) + pad,
                                       .ldb = std::max(1, tb ? s.k : s.n) + pad,
                                       .beta = beta,
                                       .ldc = s.n + pad};
              // The frozen algorithms run where the row strides are 16-byte aligned, as the
              // engine's are; the heuristic takes any.
              if (way.frozen && !(aligned(shape.lda, precision()) &&
                                  aligned(shape.ldb, precision()) && aligned(shape.ldc, output))) {
                continue;
              }
              worst = std::max(worst, expect_float64(shape, way));
              if (HasFailure()) return;  // the first failing case alone
            }
          }
        }
      }
    }
  }
  std::printf("[ gemm ] largest float32 error: %.2f x the expected float32 rounding\n", worst);
}

// The engine's GEMMs (y = x W^T at the demo models' shapes): every row of a sub-batch is bit for
// bit the row of the whole batch, at any row count and offset; on the CPU on 1 and 2 threads, on
// a GPU with the frozen algorithms. cuBLAS's heuristic is the control: its mismatches are
// printed, not asserted.
TEST_P(GemmTest, RowsDoNotDependOnTheRowCount) {
  // Past 512 rows: on Hopper the first float16 candidates at 128 rows refuse 512 (gemm_cuda.cc).
  const int total = 1100;
  const int row_counts[] = {1,  2,  3,   4,   5,   7,   8,   9,   16,  17,  31,  32,   33,  63,
                            64, 65, 127, 128, 129, 200, 255, 256, 257, 511, 512, 1000, 1100};
  for (const Precision output : outputs()) {
    for (const auto& n_k : {std::pair{768, 256}, {256, 1024}, {8000, 256}}) {
      const int n = n_k.first, k = n_k.second;
      // Values of wide range, so that a different summation order shows in the last bits.
      std::vector<float> x(static_cast<std::size_t>(total) * k);
      for (float& v : x) v = normal_(random_);
      for (std::size_t i = 0; i < x.size(); i += 7) x[i] *= 100.0f;
      std::vector<float> w(static_cast<std::size_t>(n) * k);
      for (float& v : w) v = normal_(random_);
      Array tx = floats(x), tw = floats(w);
      const std::size_t out_row = static_cast<std::size_t>(n) * precision_size(output);
      for (const GemmWay& way : ways()) {
        const auto multiply = [&](int first, int m, Array& out) {
          gemm({.input_precision = precision(),
                .output_precision = output,
                .transpose_b = true,
                .m = m,
                .n = n,
                .k = k,
                .a = tx.at(static_cast<long>(first) * k),
                .lda = k,
                .b = tw.data(),
                .ldb = k,
                .c = out.data(),
                .ldc = n},
               way);
        };
        Array whole = floats(std::vector<float>(static_cast<std::size_t>(total) * n), output);
        multiply(0, total, whole);
        const std::vector<std::byte> expected = read_raw(whole, total * out_row);
        int mismatched_calls = 0;
        for (const int m : row_counts) {
          for (const int first : {0, total - m}) {
            Array part = floats(std::vector<float>(static_cast<std::size_t>(m) * n), output);
            multiply(first, m, part);
            const std::vector<std::byte> got = read_raw(part, m * out_row);
            const bool same =
                std::memcmp(got.data(), expected.data() + first * out_row, m * out_row) == 0;
            mismatched_calls += same ? 0 : 1;
            if (batch_invariant(way)) {
              EXPECT_TRUE(same) << way.name << ", n " << n << " k " << k << ": rows " << first
                                << ".." << first + m - 1 << " differ from the same rows of "
                                << total;
            }
          }
        }
        std::printf("gemm n %d k %d %s to %s, %s: %d of %zu sub-batches differ from the whole\n", n,
                    k, std::string(precision_name(precision())).c_str(),
                    std::string(precision_name(output)).c_str(), way.name, mismatched_calls,
                    2 * std::size(row_counts));
      }
    }
  }
}

RPT_OP_TARGET_INSTANCES(GemmTest, testing::op_targets());

#if RPT_OP_TESTS_ON_CUDA
// A GPU's alone (the CPU reads and writes float32): the precision pairs cuBLAS cannot run are
// refused, before any cuBLAS call, so this runs without a device.
TEST(GemmCudaArgsCheck, RefusesPrecisionPairsCublasCannotRun) {
  for (const auto& [input, output] : {std::pair{Precision::kFloat32, Precision::kFloat16},
                                      std::pair{Precision::kFloat16, Precision::kBFloat16},
                                      std::pair{Precision::kBFloat16, Precision::kFloat16}}) {
    EXPECT_THROW(
        gemm_cuda({.input_precision = input, .output_precision = output, .m = 1, .n = 1, .k = 1},
                  nullptr),
        InvalidArgument);
  }
}
#endif

}  // namespace
}  // namespace rpt::kernels
