// gemv_cpu against a float64 evaluation: both transposes, strided rows, alpha and beta (beta 0
// never reads y), shapes of the decoder's attention (t + 1 positions x 64) and odd ones that
// reach every lane block of the loops (32-column chunks, 8-lane blocks, single columns); rows
// gathered by address give the same bits as the same rows strided.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernels/gemm.h"

namespace rpt::kernels {
namespace {

TEST(GemvCpu, MatchesFloat64WithinFloatRounding) {
  std::mt19937 random(9);
  std::normal_distribution<float> normal;
  struct Shape {
    int rows, cols;
  };
  for (const Shape s : {Shape{1, 64}, Shape{17, 64}, Shape{250, 64}, Shape{5, 7}, Shape{3, 1},
                        Shape{9, 33}, Shape{6, 47}}) {
    for (const bool transpose : {false, true}) {
      for (const float beta : {0.0f, 0.5f}) {
        SCOPED_TRACE(testing::Message() << s.rows << " x " << s.cols << " transpose " << transpose
                                        << " beta " << beta);
        const int lda = s.cols + 5;
        std::vector<float> a(static_cast<std::size_t>(s.rows) * lda);
        for (float& v : a) v = normal(random);
        const int x_size = transpose ? s.rows : s.cols;
        const int y_size = transpose ? s.cols : s.rows;
        std::vector<float> x(static_cast<std::size_t>(x_size)), y(static_cast<std::size_t>(y_size));
        for (float& v : x) v = normal(random);
        for (float& v : y)
          v = beta == 0.0f ? std::numeric_limits<float>::quiet_NaN() : normal(random);
        const std::vector<float> y_before = y;
        const float alpha = 1.5f;
        gemv_cpu({.transpose_a = transpose,
                  .rows = s.rows,
                  .cols = s.cols,
                  .alpha = alpha,
                  .a = a.data(),
                  .lda = lda,
                  .x = x.data(),
                  .beta = beta,
                  .y = y.data()});
        for (int i = 0; i < y_size; ++i) {
          double sum = 0.0, magnitudes = 0.0;
          for (int j = 0; j < x_size; ++j) {
            const float element = transpose ? a[static_cast<std::size_t>(j) * lda + i]
                                            : a[static_cast<std::size_t>(i) * lda + j];
            sum += static_cast<double>(element) * x[static_cast<std::size_t>(j)];
            magnitudes += std::abs(static_cast<double>(element) * x[static_cast<std::size_t>(j)]);
          }
          const double before = beta == 0.0f ? 0.0 : beta * y_before[static_cast<std::size_t>(i)];
          const double expected = alpha * sum + before;
          // Float sums of x_size products: at most x_size roundings of the running magnitude.
          const double bound = (x_size + 2) * 6e-8 * (alpha * magnitudes + std::abs(before));
          EXPECT_NEAR(y[static_cast<std::size_t>(i)], expected, bound) << "y[" << i << "]";
        }
      }
    }
  }
}

// The decoder's self-attention reads its positions by address (engine/cpu/position_tree.h): the
// same rows, gathered from scattered places, must give bit for bit what they give strided.
TEST(GemvCpu, GatheredRowsGiveTheStridedRowsBits) {
  std::mt19937 random(11);
  std::normal_distribution<float> normal;
  for (const int rows : {1, 3, 4, 17, 250}) {
    for (const int cols : {64, 47, 7}) {
      for (const bool transpose : {false, true}) {
        SCOPED_TRACE(testing::Message() << rows << " x " << cols << " transpose " << transpose);
        const int lda = cols + 3;
        std::vector<float> a(static_cast<std::size_t>(rows) * lda);
        for (float& v : a) v = normal(random);
        // The same rows scattered, in reverse order, 9 floats into blocks of 2 * lda.
        const long offset = 9;
        std::vector<float> scattered(static_cast<std::size_t>(rows) * 2 * lda + offset);
        std::vector<const float*> addresses(static_cast<std::size_t>(rows));
        for (int j = 0; j < rows; ++j) {
          float* block = scattered.data() + static_cast<long>(rows - 1 - j) * 2 * lda;
          std::copy_n(a.data() + static_cast<long>(j) * lda, cols, block + offset);
          addresses[static_cast<std::size_t>(j)] = block;
        }
        std::vector<float> x(static_cast<std::size_t>(transpose ? rows : cols));
        for (float& v : x) v = normal(random);
        const std::size_t y_size = static_cast<std::size_t>(transpose ? cols : rows);
        std::vector<float> strided(y_size), gathered(y_size);
        gemv_cpu({.transpose_a = transpose,
                  .rows = rows,
                  .cols = cols,
                  .a = a.data(),
                  .lda = lda,
                  .x = x.data(),
                  .y = strided.data()});
        gemv_cpu({.transpose_a = transpose,
                  .rows = rows,
                  .cols = cols,
                  .row_addresses = addresses.data(),
                  .row_offset = offset,
                  .x = x.data(),
                  .y = gathered.data()});
        for (std::size_t i = 0; i < y_size; ++i) ASSERT_EQ(gathered[i], strided[i]) << i;
      }
    }
  }
}

}  // namespace
}  // namespace rpt::kernels
