// The CPU layer norm against a float64 evaluation, in place and out of place, over dimensions
// that exercise the vector lanes and the tail; each row's result independent of the others.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/layer_norm.h"

namespace rpt::kernels {
namespace {

TEST(LayerNormCpu, MatchesFloat64WithinFloatRounding) {
  std::mt19937 random(5);
  std::normal_distribution<float> normal(0.5f, 3.0f);
  for (const int dim : {1, 7, 8, 13, 256, 1023}) {
    SCOPED_TRACE(dim);
    const int rows = 5;
    std::vector<float> x(static_cast<std::size_t>(rows) * dim), gamma(dim), beta(dim);
    for (float& v : x) v = normal(random);
    for (float& v : gamma) v = normal(random);
    for (float& v : beta) v = normal(random);
    const float eps = 1e-6f;
    std::vector<float> out(x.size());
    layer_norm_cpu(x.data(), gamma.data(), beta.data(), rows, dim, eps, out.data());
    for (int r = 0; r < rows; ++r) {
      const float* row = x.data() + static_cast<long>(r) * dim;
      double mean = 0.0, variance = 0.0;
      for (int i = 0; i < dim; ++i) mean += row[i];
      mean /= dim;
      for (int i = 0; i < dim; ++i) variance += (row[i] - mean) * (row[i] - mean);
      variance /= dim;
      const double inv_std = 1.0 / std::sqrt(variance + eps);
      for (int i = 0; i < dim; ++i) {
        const double expected = (row[i] - mean) * inv_std * gamma[i] + beta[i];
        // A few float roundings: of the mean (taken in float), the product and the sum.
        const double scale =
            (std::abs(row[i] - mean) + std::abs(mean)) * inv_std * std::abs(gamma[i]) +
            std::abs(beta[i]);
        EXPECT_NEAR(out[static_cast<std::size_t>(r) * dim + i], expected, 4e-7 * scale + 1e-30)
            << "row " << r << " column " << i;
      }
    }
    // In place, and one row alone: the same bits.
    std::vector<float> in_place = x;
    layer_norm_cpu(in_place.data(), gamma.data(), beta.data(), rows, dim, eps, in_place.data());
    EXPECT_EQ(in_place, out);
    std::vector<float> last_row(out.size() - static_cast<std::size_t>(rows - 1) * dim);
    layer_norm_cpu(x.data() + static_cast<long>(rows - 1) * dim, gamma.data(), beta.data(), 1,
                   dim, eps, last_row.data());
    EXPECT_EQ(last_row, std::vector<float>(out.end() - dim, out.end()));
  }
}

}  // namespace
}  // namespace rpt::kernels
