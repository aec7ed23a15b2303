// float32 linear layers on oneDNN's packed sgemm (kernels/packed_sgemm.h), where rpt chooses it
// (AVX-512): the products equal a double-precision reference to float32 rounding, strides are
// honoured, and each row's result is bitwise the same whatever the row count, the other rows,
// the thread count and the thread count the weights were packed under. Skipped, visibly, where
// the CPU's float32 linear layers run on BLIS (kernels/cpu_kernels.h names which).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu_kernels.h"
#include "kernels/packed_sgemm.h"
#include "kernels/parallel.h"

namespace rpt::kernels {
namespace {

struct Shape {
  const char* what;
  int n, k;
};

void PrintTo(const Shape& shape, std::ostream* out) { *out << shape.what; }

// The demo models' linear layers, a big model's, and odd sizes (tails of every block).
const Shape kShapes[] = {{"qkv_256", 768, 256},          {"ffn_inner_256", 1024, 256},
                         {"ffn_outer_256", 256, 1024},   {"generator_8000", 8000, 256},
                         {"ffn_inner_1024", 4096, 1024}, {"odd_37x100", 37, 100},
                         {"t5_small_heads", 384, 512}};

class PackedSgemm : public ::testing::TestWithParam<Shape> {
 protected:
  void SetUp() override {
    if (!float32_linear_packed()) {
      GTEST_SKIP() << "float32 linear layers run on " << cpu_kernels().float32_linear
                   << " here, not on oneDNN's packed sgemm";
    }
    const Shape& s = GetParam();
    std::mt19937 random(5);
    std::normal_distribution<float> normal;
    weights_.resize(static_cast<std::size_t>(s.n) * s.k);
    input_.resize(static_cast<std::size_t>(kMaxRows) * s.k);
    for (float& x : weights_) x = normal(random);
    for (float& x : input_) x = normal(random);
  }
  void TearDown() override { set_cpu_threads(0); }

  // output [rows, n] of input rows [first, first + rows).
  std::vector<float> run(const PackedFloat32Weights& packed, int first, int rows) const {
    const int k = GetParam().k;
    std::vector<float> out(static_cast<std::size_t>(rows) * packed.rows());
    packed_linear_cpu({.input = input_.data() + static_cast<long>(first) * k,
                       .input_stride = k,
                       .rows = rows,
                       .weights = &packed,
                       .output = out.data(),
                       .output_stride = packed.rows()});
    return out;
  }

  static constexpr int kMaxRows = 140;
  std::vector<float> weights_;
  std::vector<float> input_;
};

TEST_P(PackedSgemm, EqualsTheReferenceWithStrides) {
  const Shape& s = GetParam();
  const auto packed = PackedFloat32Weights::pack(weights_.data(), s.n, s.k);
  EXPECT_EQ(packed->rows(), s.n);
  EXPECT_EQ(packed->cols(), s.k);
  EXPECT_GE(packed->bytes(), sizeof(float) * s.n * s.k);
  // Rows 3 apart in the input, written 5 columns apart past the output's width.
  const int rows = 9, in_stride = s.k * 3, out_stride = s.n + 5;
  std::vector<float> out(static_cast<std::size_t>(rows) * out_stride, -7.0f);
  packed_linear_cpu({.input = input_.data(),
                     .input_stride = in_stride,
                     .rows = rows,
                     .weights = packed.get(),
                     .output = out.data(),
                     .output_stride = out_stride});
  for (int r = 0; r < rows; ++r) {
    for (int j = 0; j < s.n; ++j) {
      double sum = 0.0, magnitude = 0.0;
      for (int i = 0; i < s.k; ++i) {
        const double term =
            static_cast<double>(input_[static_cast<std::size_t>(r) * in_stride + i]) *
            weights_[static_cast<std::size_t>(j) * s.k + i];
        sum += term;
        magnitude += std::fabs(term);
      }
      ASSERT_NEAR(out[static_cast<std::size_t>(r) * out_stride + j], sum, 1e-6 * magnitude + 1e-6)
          << "row " << r << " column " << j;
    }
    for (int j = s.n; j < out_stride; ++j) {
      ASSERT_EQ(out[static_cast<std::size_t>(r) * out_stride + j], -7.0f) << "wrote past n";
    }
  }
}

TEST_P(PackedSgemm, EachRowIsTheSameWhateverTheBatchThreadsAndPacking) {
  const Shape& s = GetParam();
  set_cpu_threads(1);
  const auto packed_one = PackedFloat32Weights::pack(weights_.data(), s.n, s.k);
  std::vector<float> alone(static_cast<std::size_t>(kMaxRows) * s.n);
  for (int r = 0; r < kMaxRows; ++r) {
    const std::vector<float> row = run(*packed_one, r, 1);
    std::copy(row.begin(), row.end(), alone.begin() + static_cast<long>(r) * s.n);
  }
  set_cpu_threads(2);  // other blocks: a thread's share of the columns each
  const auto packed_two = PackedFloat32Weights::pack(weights_.data(), s.n, s.k);
  for (const auto* packed : {packed_one.get(), packed_two.get()}) {
    for (const int threads : {1, 2}) {
      set_cpu_threads(threads);
      std::string differing;
      for (const int m : {2, 3, 4, 5, 8, 15, 16, 17, 31, 32, 33, 64, 65, 100, 127, 128, 139}) {
        for (const int first : {0, 1}) {
          const std::vector<float> out = run(*packed, first, m);
          int rows = 0;
          for (int i = 0; i < m; ++i) {
            rows += std::memcmp(out.data() + static_cast<long>(i) * s.n,
                                alone.data() + static_cast<long>(first + i) * s.n,
                                sizeof(float) * s.n) != 0;
          }
          if (rows > 0) differing += " m=" + std::to_string(m) + ": " + std::to_string(rows);
        }
      }
      EXPECT_TRUE(differing.empty()) << s.what << ", blocks of " << packed->block_columns() << ", "
                                     << threads << " threads, rows unlike alone at" << differing;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(LinearShapes, PackedSgemm, ::testing::ValuesIn(kShapes),
                         [](const ::testing::TestParamInfo<Shape>& shape) {
                           return std::string(shape.param.what);
                         });

// oneDNN's layout pads a packed matrix to whole sub-blocks (k = 1024 in three 384-deep ones, more
// than 9,984 output features in 9,984-wide ones, output features to a multiple of 48), but
// packing writes the matrix's own values only and the padding is never touched: the packed
// weights take about the plain matrix's memory, whatever the layout spans (at most a page per
// sub-block more: each starts on one, and the header's).
TEST(PackedSgemmMemory, TheLayoutsPaddingTakesNoMemory) {
  if (!float32_linear_packed()) {
    GTEST_SKIP() << "float32 linear layers run on " << cpu_kernels().float32_linear << " here";
  }
  set_cpu_threads(1);
  constexpr std::size_t kPages = 16 * 4096;
  for (const Shape& s : {Shape{"big_attention", 1024, 1024}, Shape{"big_ffn_inner", 4096, 1024},
                         Shape{"wide_10000", 10000, 256}, Shape{"odd_1000x333", 1000, 333}}) {
    const std::vector<float> weights(static_cast<std::size_t>(s.n) * s.k, 0.5f);
    const auto packed = PackedFloat32Weights::pack(weights.data(), s.n, s.k);
    const std::size_t plain = sizeof(float) * weights.size();
    EXPECT_GE(packed->bytes(), plain) << s.what;
    EXPECT_LE(packed->bytes(), plain + kPages) << s.what;
    EXPECT_GE(packed->layout_bytes(), packed->bytes()) << s.what;
    std::printf("%s: layout %.3f, in memory %.3f of the plain bytes\n", s.what,
                static_cast<double>(packed->layout_bytes()) / plain,
                static_cast<double>(packed->bytes()) / plain);
  }
  set_cpu_threads(0);
}

}  // namespace
}  // namespace rpt::kernels
