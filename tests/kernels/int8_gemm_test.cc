// The int8 linear layer (kernels/int8_gemm.h), with weights packed for oneDNN's packed GEMM and
// with the plain weights of the matmul fallback: quantize/dequantize round trips within half a
// step, the oneDNN products exact against an integer loop on the same quantized values (the
// zero-point correction and the int16 saturation without VNNI included), the whole layer
// within the error bound its scales imply against float64, rows independent of the call's
// other rows, the edge cases (zero rows, non-finite values), and both kinds giving the same
// outputs, bit for bit, at every row count.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/int8_products_cpu.h"
#include "kernels/errors.h"
#include "kernels/int8_gemm.h"
#include "kernels/parallel.h"
#include "tests/support/scoped_environment.h"

namespace rpt::kernels {
namespace {

std::vector<float> random_matrix(int rows, int cols, unsigned seed, float spread = 1.0f) {
  std::mt19937 generator(seed);
  std::normal_distribution<float> normal(0.0f, spread);
  std::vector<float> out(static_cast<std::size_t>(rows) * cols);
  for (float& value : out) value = normal(generator);
  return out;
}

// Quantized activations as the layer computes them.
struct QuantizedActivations {
  std::vector<std::uint8_t> values;
  std::vector<float> scales;
};

QuantizedActivations quantize_activations(const std::vector<float>& x, int rows, int cols) {
  QuantizedActivations out{std::vector<std::uint8_t>(x.size()),
                           std::vector<float>(static_cast<std::size_t>(rows))};
  quantize_rows_cpu(x.data(), rows, cols, out.values.data(), out.scales.data());
  return out;
}

// Packed whatever the matrix's size, plain, or as the models get them (packed when that costs
// little memory).
enum class Kind { kPacked, kMatmul, kDefault };

std::shared_ptr<const Int8Weights> quantize_as(Kind kind, const std::vector<float>& w, int rows,
                                               int cols) {
  const char* setting = kind == Kind::kDefault ? nullptr : kind == Kind::kPacked ? "1" : "0";
  const testing::ScopedEnvironmentVariable packing("RPT_INT8_PACKED", setting);
  return Int8Weights::quantize(w.data(), rows, cols);
}

// Whether this oneDNN has the packed int8 GEMM (else every kind is the matmul).
bool packing_available() { return quantize_as(Kind::kPacked, {1.0f}, 1, 1)->packed(); }

// Every test of the layer runs with each kind of weights.
class Int8Gemm : public ::testing::TestWithParam<Kind> {
 protected:
  void SetUp() override {
    if (GetParam() == Kind::kPacked && !packing_available()) {
      GTEST_SKIP() << "this oneDNN has no packed int8 GEMM: the matmul serves";
    }
  }
  std::shared_ptr<const Int8Weights> quantize(const std::vector<float>& w, int rows,
                                              int cols) const {
    return quantize_as(GetParam(), w, rows, cols);
  }
};

INSTANTIATE_TEST_SUITE_P(Kinds, Int8Gemm, ::testing::Values(Kind::kPacked, Kind::kMatmul),
                         [](const ::testing::TestParamInfo<Kind>& kind) {
                           return kind.param == Kind::kPacked ? "packed" : "matmul";
                         });

std::vector<float> linear(const std::vector<float>& x, int rows, const Int8Weights& weights,
                          const float* bias = nullptr,
                          ActivationKind activation = ActivationKind::kIdentity) {
  std::vector<float> y(static_cast<std::size_t>(rows) * weights.rows());
  int8_linear_cpu({.input = x.data(),
                   .rows = rows,
                   .weights = &weights,
                   .bias = bias,
                   .activation = activation,
                   .output = y.data()});
  return y;
}

TEST_P(Int8Gemm, WeightRoundTripWithinHalfAStep) {
  const int rows = 37, cols = 300;
  const std::vector<float> w = random_matrix(rows, cols, 1, 0.2f);
  const auto q = quantize(w, rows, cols);
  EXPECT_EQ(q->packed(), GetParam() == Kind::kPacked);
  const std::vector<std::int8_t> values = q->unpacked_values();
  for (int r = 0; r < rows; ++r) {
    const float scale = q->scales()[r];
    float largest = 0.0f;
    std::int32_t sum = 0;
    for (int c = 0; c < cols; ++c) {
      const long i = static_cast<long>(r) * cols + c;
      largest = std::max(largest, std::fabs(w[i]));
      ASSERT_LE(std::abs(values[i]), kWeightLevels);
      EXPECT_LE(std::fabs(w[i] - scale * values[i]), 0.5f * scale * (1 + 1e-5f)) << r;
      sum += values[i];
    }
    EXPECT_FLOAT_EQ(scale, largest / kWeightLevels);
    EXPECT_EQ(q->row_sums()[r], sum);
  }
}

TEST(Int8Activations, RoundTripWithinHalfAStep) {
  const int rows = 20, cols = 513;
  std::vector<float> x = random_matrix(rows, cols, 2, 3.0f);
  x[5] = 1e-30f;  // tiny values quantize to the zero point
  const QuantizedActivations q = quantize_activations(x, rows, cols);
  for (int r = 0; r < rows; ++r) {
    const float scale = q.scales[static_cast<std::size_t>(r)];
    for (int c = 0; c < cols; ++c) {
      const long i = static_cast<long>(r) * cols + c;
      const int level = q.values[i] - int8_activation_levels().zero_point;
      ASSERT_LE(std::abs(level), int8_activation_levels().levels);
      EXPECT_LE(std::fabs(x[i] - scale * level), 0.5f * scale * (1 + 1e-5f)) << r << "," << c;
    }
  }
}

// 8 bits only where oneDNN's kernels sum u8 x s8 exactly (VNNI), or where a prober says so;
// LargestLevelsDoNotSaturate below holds whichever this process uses to exact sums.
TEST(Int8Activations, LevelsFollowTheKernelsAndTheSetting) {
  EXPECT_EQ(choose_activation_levels(true, nullptr), k8BitActivations);
  EXPECT_EQ(choose_activation_levels(false, nullptr), k7BitActivations);
  EXPECT_EQ(choose_activation_levels(true, "8"), k8BitActivations);
  EXPECT_EQ(choose_activation_levels(false, "8"), k7BitActivations);
  EXPECT_EQ(choose_activation_levels(true, "7"), k7BitActivations);
  EXPECT_EQ(choose_activation_levels(false, "8-unchecked"), k8BitActivations);
  EXPECT_THROW(choose_activation_levels(true, "16"), InvalidArgument);
  EXPECT_EQ(k8BitActivations.bits(), 8);
  EXPECT_EQ(k7BitActivations.bits(), 7);
  // Levels and zero point keep every stored value in u8's [1, 255].
  for (const ActivationLevels levels : {k7BitActivations, k8BitActivations}) {
    EXPECT_GE(levels.zero_point - levels.levels, 1);
    EXPECT_LE(levels.zero_point + levels.levels, 255);
  }
  const std::string description = int8_products_description();
  EXPECT_NE(description.find(std::to_string(int8_activation_levels().bits()) + "-bit"),
            std::string::npos)
      << description;
}

// y must equal sx sw sum(qx qw) + b computed exactly (integers) and rounded once to float.
void expect_exact_products(const std::vector<float>& x, int rows, const Int8Weights& weights,
                           const std::vector<float>& bias, const std::vector<float>& y) {
  const int n = weights.rows(), k = weights.cols();
  const QuantizedActivations q = quantize_activations(x, rows, k);
  const std::vector<std::int8_t> values = weights.unpacked_values();
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < n; ++c) {
      std::int64_t sum = 0;
      for (int i = 0; i < k; ++i) {
        sum += static_cast<std::int64_t>(q.values[static_cast<long>(r) * k + i] -
                                         int8_activation_levels().zero_point) *
               values[static_cast<long>(c) * k + i];
      }
      const double product = static_cast<double>(sum) * q.scales[r] * weights.scales()[c];
      const double b = bias[static_cast<std::size_t>(c)];
      const double got = y[static_cast<long>(r) * n + c];
      // Three float32 roundings of the product (exact integer sum, two scales) and the add.
      ASSERT_NEAR(got, product + b, 4e-7 * (std::fabs(product) + std::fabs(b)) + 1e-30)
          << r << "," << c;
    }
  }
}

TEST_P(Int8Gemm, ProductsExactAgainstIntegerLoop) {
  struct Shape {
    int m, n, k;
  };
  // Few rows (one sentence at beam 4), a decoder step of 32 sentences, an encoder batch; split
  // by columns and by rows across two threads.
  for (const Shape shape : {Shape{4, 768, 256}, Shape{128, 256, 1024}, Shape{300, 96, 64},
                            Shape{1, 8000, 256}, Shape{3, 5, 7}}) {
    for (const int threads : {1, 2}) {
      set_cpu_threads(threads);
      const std::vector<float> x = random_matrix(shape.m, shape.k, 3);
      const std::vector<float> w = random_matrix(shape.n, shape.k, 4, 0.1f);
      const std::vector<float> bias = random_matrix(1, shape.n, 5);
      const auto weights = quantize(w, shape.n, shape.k);
      expect_exact_products(x, shape.m, *weights, bias, linear(x, shape.m, *weights, bias.data()));
    }
  }
  set_cpu_threads(0);
}

// Every input at the largest level and every weight at +-127: the sums that saturate int16
// pairs when activations take 8 bits; with rpt's 7 they must stay exact.
TEST_P(Int8Gemm, LargestLevelsDoNotSaturate) {
  const int m = 8, n = 64, k = 1024;
  const std::vector<float> x(static_cast<std::size_t>(m) * k, 2.5f);
  std::vector<float> w(static_cast<std::size_t>(n) * k, 0.75f);
  for (int c = 0; c < n; c += 2) std::fill_n(w.begin() + static_cast<long>(c) * k, k, -0.75f);
  const auto weights = quantize(w, n, k);
  const std::vector<float> y = linear(x, m, *weights);
  for (int r = 0; r < m; ++r) {
    for (int c = 0; c < n; ++c) {
      const double expected = (c % 2 == 0 ? -1.0 : 1.0) * 2.5 * 0.75 * k;
      ASSERT_NEAR(y[static_cast<long>(r) * n + c], expected, 1e-4 * std::fabs(expected));
    }
  }
}

// Against float64 on the unquantized values: each product x w carries at most
// |x| dw + |w| dx + dx dw with dx, dw half a quantization step. Returns the largest error / bound.
double expect_within_bound(const std::vector<float>& x, int m, const std::vector<float>& w,
                           const Int8Weights& weights, const std::vector<float>& y) {
  const int n = weights.rows(), k = weights.cols();
  const QuantizedActivations q = quantize_activations(x, m, k);
  double worst_ratio = 0.0;
  for (int r = 0; r < m; ++r) {
    const double dx = 0.5 * q.scales[static_cast<std::size_t>(r)];
    for (int c = 0; c < n; ++c) {
      const double dw = 0.5 * weights.scales()[c];
      double exact = 0.0;
      double bound = 0.0;
      for (int i = 0; i < k; ++i) {
        const double xv = x[static_cast<long>(r) * k + i];
        const double wv = w[static_cast<long>(c) * k + i];
        exact += xv * wv;
        bound += std::fabs(xv) * dw + std::fabs(wv) * dx + dx * dw;
      }
      const double error = std::fabs(y[static_cast<long>(r) * n + c] - exact);
      if (error > bound * 1.001 + 1e-6) {
        ADD_FAILURE() << "error " << error << " past the bound " << bound << " at " << r << "," << c
                      << " of " << m << " x " << n << " x " << k;
        return worst_ratio;
      }
      worst_ratio = std::max(worst_ratio, error / bound);
    }
  }
  return worst_ratio;
}

TEST_P(Int8Gemm, WithinTheBoundTheScalesImply) {
  const int m = 16, n = 200, k = 512;
  const std::vector<float> x = random_matrix(m, k, 6, 2.0f);
  const std::vector<float> w = random_matrix(n, k, 7, 0.05f);
  const auto weights = quantize(w, n, k);
  const double worst_ratio = expect_within_bound(x, m, w, *weights, linear(x, m, *weights));
  // Errors of independent roundings mostly cancel: far inside the worst case, but not zero.
  EXPECT_GT(worst_ratio, 0.0);
  std::printf("largest error / worst-case bound: %.3f\n", worst_ratio);
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// A weight matrix [n, k].
struct WeightShape {
  int n, k;
};

// The demo models' linear layers (d_model 256, d_ff 1024, 8,000 tokens).
constexpr WeightShape kModelShapes[] = {
    {768, 256}, {256, 256}, {1024, 256}, {256, 1024}, {8000, 256}};

// The packed weights and the matmul's, or nothing where this oneDNN cannot pack.
struct BothKinds {
  std::shared_ptr<const Int8Weights> packed, plain;
};

std::optional<BothKinds> both_kinds(const std::vector<float>& w, WeightShape shape) {
  BothKinds out{quantize_as(Kind::kPacked, w, shape.n, shape.k),
                quantize_as(Kind::kMatmul, w, shape.n, shape.k)};
  if (!out.packed->packed()) return std::nullopt;
  return out;
}

// The demo models' layers and a width that is not a multiple of the column block, at the row
// counts of batches and beams, split over 1 and 2 threads: the packed products give the matmul's
// outputs, bit for bit, within the bound.
TEST(Int8GemmKinds, PackedOutputsAreTheMatmuls) {
  std::vector<WeightShape> shapes(std::begin(kModelShapes), std::end(kModelShapes));
  shapes.push_back({300, 256});
  for (const WeightShape shape : shapes) {
    const std::vector<float> w = random_matrix(shape.n, shape.k, 20, 0.05f);
    const std::optional<BothKinds> weights = both_kinds(w, shape);
    if (!weights) GTEST_SKIP() << "this oneDNN has no packed int8 GEMM";
    for (const int m : {1, 2, 3, 4, 5, 16, 37, 128, 300}) {
      const std::vector<float> x = random_matrix(m, shape.k, 21, 2.0f);
      std::vector<float> first;
      for (const int threads : {1, 2}) {
        set_cpu_threads(threads);
        const std::vector<float> packed = linear(x, m, *weights->packed);
        ASSERT_TRUE(same_bits(packed, linear(x, m, *weights->plain)))
            << m << " x " << shape.n << " x " << shape.k << ", " << threads << " threads";
        if (first.empty()) {
          first = packed;
          expect_within_bound(x, m, w, *weights->packed, packed);
        }
        ASSERT_TRUE(same_bits(packed, first)) << "threads change the outputs";
      }
    }
  }
  set_cpu_threads(0);
}

// oneDNN asks at packing for the rows (activations) the products will take; the layout must not
// depend on them, so every row count is tried.
TEST(Int8GemmKinds, PackedLayoutServesEveryRowCount) {
  const WeightShape shape{300, 256};
  const std::vector<float> w = random_matrix(shape.n, shape.k, 23, 0.05f);
  const std::optional<BothKinds> weights = both_kinds(w, shape);
  if (!weights) GTEST_SKIP() << "this oneDNN has no packed int8 GEMM";
  set_cpu_threads(1);
  const std::vector<float> x = random_matrix(300, shape.k, 24, 2.0f);
  for (int m = 1; m <= 300; ++m) {
    ASSERT_TRUE(same_bits(linear(x, m, *weights->packed), linear(x, m, *weights->plain))) << m;
  }
  set_cpu_threads(0);
}

// The packed layout replaces the plain values (bytes() is what the model's memory accounting adds
// up), never both copies; of its padding only the pages packing writes take memory (a page per
// sub-block and the header's at most: kernels/cpu/onednn_cpu.h, PackedBlockBuffer).
TEST(Int8GemmKinds, PackedWeightsHoldNoPlainCopy) {
  const WeightShape shape{768, 256};
  const std::optional<BothKinds> weights = both_kinds(random_matrix(shape.n, shape.k, 25), shape);
  if (!weights) GTEST_SKIP() << "this oneDNN has no packed int8 GEMM";
  const std::size_t values = static_cast<std::size_t>(shape.n) * shape.k;
  const std::size_t per_row = sizeof(float) + sizeof(std::int32_t);  // scale and row sum
  EXPECT_EQ(weights->plain->bytes(), values + shape.n * per_row);
  EXPECT_GE(weights->packed->bytes(), values + shape.n * per_row);
  EXPECT_LE(weights->packed->bytes(), values + shape.n * per_row + 4 * 4096);
  std::printf("packed / plain bytes: %.3f\n",
              static_cast<double>(weights->packed->bytes()) / weights->plain->bytes());
}

// A matrix's columns come in one block per thread's share (at least 256 wide): each thread's
// share of a product is one call into oneDNN, whose setup costs microseconds a call.
TEST(Int8GemmKinds, OneColumnBlockPerThreadsShare) {
  const std::vector<float> w = random_matrix(1000, 64, 27, 0.05f);
  for (const int threads : {1, 2, 3}) {
    set_cpu_threads(threads);
    const auto weights = Int8Weights::quantize(w.data(), 1000, 64);
    EXPECT_EQ(weights->column_blocks(), threads) << threads << " threads";
    EXPECT_EQ(weights->block_columns() % 64, 0);
  }
  set_cpu_threads(2);
  EXPECT_EQ(Int8Weights::quantize(w.data(), 256, 64)->column_blocks(), 1);  // 2 x 128: too narrow
  set_cpu_threads(0);
}

// The models' matrices are packed; one whose packed layout would span much more memory than its
// values (oneDNN spends some 12 KiB a block on headers and alignment) stays plain.
TEST(Int8GemmKinds, ModelsPackAllButTinyMatrices) {
  if (!packing_available()) GTEST_SKIP() << "this oneDNN has no packed int8 GEMM";
  for (const WeightShape shape : kModelShapes) {
    EXPECT_TRUE(quantize_as(Kind::kDefault, random_matrix(shape.n, shape.k, 26), shape.n, shape.k)
                    ->packed())
        << shape.n << " x " << shape.k;
  }
  EXPECT_FALSE(quantize_as(Kind::kDefault, random_matrix(64, 32, 27), 64, 32)->packed());
}

TEST_P(Int8Gemm, RowsIndependentOfTheirBatch) {
  const int n = 512, k = 256, m = 150;
  const std::vector<float> x = random_matrix(m, k, 8);
  const std::vector<float> w = random_matrix(n, k, 9, 0.1f);
  const auto weights = quantize(w, n, k);
  set_cpu_threads(2);
  const std::vector<float> all = linear(x, m, *weights);
  for (const int row : {0, 77, 149}) {
    const std::vector<float> one(x.begin() + static_cast<long>(row) * k,
                                 x.begin() + static_cast<long>(row + 1) * k);
    const std::vector<float> alone = linear(one, 1, *weights);
    for (int c = 0; c < n; ++c) {
      ASSERT_EQ(alone[c], all[static_cast<long>(row) * n + c]) << row << "," << c;
    }
  }
  set_cpu_threads(0);
}

TEST_P(Int8Gemm, BiasAndActivation) {
  const int m = 5, n = 40, k = 32;
  const std::vector<float> x = random_matrix(m, k, 10);
  const std::vector<float> w = random_matrix(n, k, 11, 0.3f);
  const std::vector<float> bias = random_matrix(1, n, 12);
  const auto weights = quantize(w, n, k);
  const std::vector<float> plain = linear(x, m, *weights, bias.data());
  const std::vector<float> relu = linear(x, m, *weights, bias.data(), ActivationKind::kRelu);
  int negatives = 0;
  for (std::size_t i = 0; i < plain.size(); ++i) {
    EXPECT_EQ(relu[i], std::max(plain[i], 0.0f));
    negatives += plain[i] < 0.0f;
  }
  EXPECT_GT(negatives, 0);
}

TEST_P(Int8Gemm, ZeroRowsGiveTheBias) {
  const int m = 3, n = 4, k = 16;
  std::vector<float> w = random_matrix(n, k, 13);
  std::fill_n(w.begin() + k, k, 0.0f);  // output feature 1: all-zero weights
  std::vector<float> x = random_matrix(m, k, 14);
  std::fill_n(x.begin(), k, 0.0f);  // row 0: all-zero input
  const std::vector<float> bias = {0.5f, -1.0f, 2.0f, 0.25f};
  const auto weights = quantize(w, n, k);
  EXPECT_EQ(weights->scales()[1], 0.0f);
  const std::vector<float> y = linear(x, m, *weights, bias.data());
  for (int c = 0; c < n; ++c) EXPECT_EQ(y[c], bias[c]) << "zero input row, column " << c;
  for (int r = 0; r < m; ++r) EXPECT_EQ(y[r * n + 1], -1.0f) << "zero weight row, row " << r;
  for (float v : y) EXPECT_TRUE(std::isfinite(v));
}

// A fused projection is quantized part by part as the model file gives its parts (engine/model.cc):
// each row is quantized alone, so the parts' rows stacked, in whatever order they came, are the
// stack quantized, bit for bit: values, scales, row sums and outputs.
TEST_P(Int8Gemm, PartsQuantizedAloneAreTheirStackQuantized) {
  const int cols = 96;
  for (const std::vector<int>& parts : {std::vector<int>{64, 64, 64}, {50, 13, 1, 200}}) {
    int rows = 0;
    for (const int part : parts) rows += part;
    const std::vector<float> stack = random_matrix(rows, cols, 18, 0.1f);
    const auto whole = quantize(stack, rows, cols);
    QuantizedRows quantized(rows, cols);
    for (int part = static_cast<int>(parts.size()) - 1, first = rows; part >= 0; --part) {
      first -= parts[static_cast<std::size_t>(part)];
      quantized.quantize(first, stack.data() + static_cast<long>(first) * cols,
                         parts[static_cast<std::size_t>(part)]);
    }
    const char* setting = GetParam() == Kind::kPacked ? "1" : "0";
    const testing::ScopedEnvironmentVariable packing("RPT_INT8_PACKED", setting);
    const auto stacked = Int8Weights::from_rows(std::move(quantized));
    EXPECT_EQ(stacked->packed(), whole->packed());
    EXPECT_EQ(stacked->unpacked_values(), whole->unpacked_values());
    EXPECT_EQ(std::memcmp(stacked->scales(), whole->scales(), sizeof(float) * rows), 0);
    EXPECT_EQ(std::memcmp(stacked->row_sums(), whole->row_sums(), sizeof(std::int32_t) * rows), 0);
    const std::vector<float> x = random_matrix(7, cols, 19);
    EXPECT_TRUE(same_bits(linear(x, 7, *stacked), linear(x, 7, *whole)));
  }
  QuantizedRows quantized(10, cols);
  const std::vector<float> part = random_matrix(4, cols, 22);
  EXPECT_THROW(quantized.quantize(8, part.data(), 4), InvalidArgument) << "rows 10 and 11";
  EXPECT_THROW(quantized.quantize(-1, part.data(), 4), InvalidArgument);
  EXPECT_THROW(Int8Weights::from_rows(QuantizedRows(0, cols)), InvalidArgument);
}

TEST_P(Int8Gemm, NonFiniteWeightsAreRefusedAndInputsPropagate) {
  std::vector<float> w = random_matrix(3, 8, 15);
  w[2 * 8 + 5] = std::numeric_limits<float>::infinity();
  EXPECT_THROW(quantize(w, 3, 8), InvalidArgument);
  w[2 * 8 + 5] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_THROW(quantize(w, 3, 8), InvalidArgument);
  EXPECT_THROW(quantize(w, 0, 8), InvalidArgument);

  const std::vector<float> good = random_matrix(3, 8, 16);
  const auto weights = quantize(good, 3, 8);
  std::vector<float> x = random_matrix(2, 8, 17);
  x[3] = std::numeric_limits<float>::quiet_NaN();  // row 0 only
  const std::vector<float> y = linear(x, 2, *weights);
  for (int c = 0; c < 3; ++c) {
    EXPECT_TRUE(std::isnan(y[c])) << "a NaN input row stays NaN, as in float32";
    EXPECT_TRUE(std::isfinite(y[3 + c])) << "the other row is unaffected";
  }
}

// Rows are quantized in parallel (kernels/parallel.h), each alone, the rounding vectorised where
// the CPU allows: the bits of the scalar lrint loop on 1 and 3 threads, halfway cases to even;
// of several rows holding a non-finite value the first is named, whichever thread met it.
TEST(QuantizedRows, SameBitsOnAnyThreadCountAndTheFirstBadRowNamed) {
  const int threads_before = cpu_threads();
  const int rows = 700, cols = 300;  // chunks of 218 rows on 3 threads
  std::vector<float> w = random_matrix(rows, cols, 31, 0.1f);
  // Row 0 scales by exactly 1 (its largest is 127) and holds halfway cases.
  for (int c = 0; c < cols; ++c) w[c] = c == 0 ? 127.0f : static_cast<float>(c % 254) - 126.5f;
  std::vector<std::int8_t> values(w.size());
  std::vector<float> scales(rows);
  std::vector<std::int32_t> sums(rows);
  for (int r = 0; r < rows; ++r) {  // the scalar definition
    const float* row = w.data() + static_cast<long>(r) * cols;
    float largest = 0.0f;
    for (int c = 0; c < cols; ++c) largest = std::max(largest, std::fabs(row[c]));
    const float inverse = kWeightLevels / largest;
    for (int c = 0; c < cols; ++c) {
      values[static_cast<std::size_t>(r) * cols + c] =
          static_cast<std::int8_t>(std::lrint(row[c] * inverse));
      sums[static_cast<std::size_t>(r)] += values[static_cast<std::size_t>(r) * cols + c];
    }
    scales[static_cast<std::size_t>(r)] = largest / kWeightLevels;
  }
  EXPECT_EQ(values[1], -126) << "-125.5 rounds to the even -126";
  for (const int threads : {1, 3}) {
    set_cpu_threads(threads);
    QuantizedRows quantized(rows, cols);
    quantized.quantize(0, w.data(), rows);
    const auto weights = Int8Weights::from_rows(std::move(quantized));
    EXPECT_EQ(weights->unpacked_values(), values) << threads << " threads";
    EXPECT_EQ(std::memcmp(weights->scales(), scales.data(), sizeof(float) * rows), 0) << threads;
    EXPECT_EQ(std::memcmp(weights->row_sums(), sums.data(), sizeof(std::int32_t) * rows), 0)
        << threads;
  }
  w[600 * cols + 1] = std::numeric_limits<float>::infinity();
  w[5 * cols + 7] = std::numeric_limits<float>::quiet_NaN();
  QuantizedRows quantized(rows, cols);
  try {
    quantized.quantize(0, w.data(), rows);
    FAIL() << "quantized a NaN";
  } catch (const InvalidArgument& error) {
    EXPECT_NE(error.message().find("weight row 5 holds nan"), std::string::npos) << error.message();
  }
  set_cpu_threads(threads_before);
}

// An int8 model file's rows are taken as stored where quantizing their dequantized form gives
// them back, and made to round-trip elsewhere: either way the bits of that round trip (the
// loader's before), on 1 and 3 threads. Rows: the converters' (largest |value| 127) with random
// scales, some of which round-trip to another float; and those that do not take the fast way.
TEST(QuantizedRows, StoredRowsTakenGiveTheBitsOfTheirRoundTrip) {
  const int threads_before = cpu_threads();
  const int rows = 600, cols = 200;
  std::mt19937 random(51);
  std::uniform_int_distribution<int> value(-127, 127);
  std::uniform_real_distribution<float> exponent(-30.0f, 30.0f);
  std::vector<std::int8_t> values(static_cast<std::size_t>(rows) * cols);
  std::vector<float> scales(rows);
  for (int r = 0; r < rows; ++r) {
    std::int8_t* row = values.data() + static_cast<long>(r) * cols;
    for (int c = 0; c < cols; ++c) row[c] = static_cast<std::int8_t>(value(random));
    row[r % cols] = r % 2 == 0 ? 127 : -127;
    scales[r] = std::exp2(exponent(random));
  }
  std::fill_n(values.data() + 1 * cols, cols, std::int8_t{0});  // an all-zero row, scale 0
  scales[1] = 0.0f;
  for (int c = 0; c < cols; ++c) values[2 * cols + c] = static_cast<std::int8_t>(c % 100);
  values[3 * cols + 4] = -128;                             // largest 128
  scales[4] = std::numeric_limits<float>::min() * 2.0f;    // the smallest normal scales
  scales[5] = std::numeric_limits<float>::max() / 200.0f;  // and the largest, 127 x still finite
  scales[6] = -0.5f;                                       // a negative scale
  std::vector<float> dequantized(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    dequantized[i] = scales[i / cols] * static_cast<float>(values[i]);
  }
  int scales_changed = 0;
  for (int threads : {1, 3}) {
    set_cpu_threads(threads);
    QuantizedRows round_trip(rows, cols);
    round_trip.quantize(0, dequantized.data(), rows);
    QuantizedRows taken(rows, cols);
    taken.take(0, values.data(), scales.data(), 250);  // in two parts, as fused members come
    taken.take(250, values.data() + 250L * cols, scales.data() + 250, rows - 250);
    const auto want = Int8Weights::from_rows(std::move(round_trip));
    const auto got = Int8Weights::from_rows(std::move(taken));
    EXPECT_EQ(got->unpacked_values(), want->unpacked_values()) << threads << " threads";
    EXPECT_EQ(std::memcmp(got->scales(), want->scales(), sizeof(float) * rows), 0) << threads;
    EXPECT_EQ(std::memcmp(got->row_sums(), want->row_sums(), sizeof(std::int32_t) * rows), 0)
        << threads;
    scales_changed = 0;
    for (int r = 7; r < rows; ++r) scales_changed += got->scales()[r] != scales[r];
  }
  EXPECT_GT(scales_changed, 0) << "converters' rows whose scale the round trip changes: a take "
                                  "that kept the stored scale would fail above";
  QuantizedRows overflowing(1, cols);
  std::vector<float> huge{std::numeric_limits<float>::max()};
  EXPECT_THROW(overflowing.take(0, values.data(), huge.data(), 1), InvalidArgument)
      << "127 x the largest float is infinite: as quantize() of it";
  EXPECT_THROW(overflowing.take(1, values.data(), scales.data(), 1), InvalidArgument);
  set_cpu_threads(threads_before);
}

// The storage from_rows hands back when packed products copied the values serves the next
// QuantizedRows (a model loader's next matrix): zero again where not quantized, the same bits as
// fresh storage; plain products keep the values and hand nothing back.
TEST(QuantizedRows, RecycledStorageIsZeroedAndGivesTheSameBits) {
  const int cols = 64;
  const std::vector<float> first = random_matrix(300, cols, 41);
  const std::vector<float> second = random_matrix(200, cols, 42);
  std::vector<std::int8_t> spare;
  {
    const testing::ScopedEnvironmentVariable packing("RPT_INT8_PACKED", "1");
    QuantizedRows rows(300, cols);
    rows.quantize(0, first.data(), 300);
    ASSERT_TRUE(Int8Weights::from_rows(std::move(rows), &spare)->packed());
  }
  ASSERT_EQ(spare.size(), static_cast<std::size_t>(300 * cols));
  QuantizedRows recycled(200, cols, std::move(spare));
  QuantizedRows fresh(200, cols);
  recycled.quantize(0, second.data(), 120);  // rows 120-199 stay zero
  fresh.quantize(0, second.data(), 120);
  const testing::ScopedEnvironmentVariable packing("RPT_INT8_PACKED", "0");
  std::vector<std::int8_t> kept;
  const auto a = Int8Weights::from_rows(std::move(recycled), &kept);
  const auto b = Int8Weights::from_rows(std::move(fresh));
  EXPECT_FALSE(a->packed());
  EXPECT_TRUE(kept.empty()) << "the plain products keep their values";
  EXPECT_EQ(a->unpacked_values(), b->unpacked_values());
  EXPECT_EQ(std::memcmp(a->scales(), b->scales(), sizeof(float) * 200), 0);
  EXPECT_EQ(std::memcmp(a->row_sums(), b->row_sums(), sizeof(std::int32_t) * 200), 0);
}

}  // namespace
}  // namespace rpt::kernels
