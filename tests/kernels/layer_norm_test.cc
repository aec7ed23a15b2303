// The CPU layer norm and RMS norm against a float64 evaluation, in place and out of place, over
// dimensions that exercise the vector lanes and the tail; each row's result independent of the
// others. The gated feed-forward's pieces: the tanh GELU and the element-wise product.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/activation.h"
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
    layer_norm_cpu(x.data() + static_cast<long>(rows - 1) * dim, gamma.data(), beta.data(), 1, dim,
                   eps, last_row.data());
    EXPECT_EQ(last_row, std::vector<float>(out.end() - dim, out.end()));
  }
}

TEST(RmsNormCpu, MatchesFloat64WithinFloatRounding) {
  std::mt19937 random(6);
  std::normal_distribution<float> normal(0.5f, 3.0f);
  for (const int dim : {1, 7, 8, 13, 256, 1023}) {
    SCOPED_TRACE(dim);
    const int rows = 4;
    std::vector<float> x(static_cast<std::size_t>(rows) * dim), gamma(dim);
    for (float& v : x) v = normal(random);
    for (float& v : gamma) v = normal(random);
    const float eps = 1e-6f;
    std::vector<float> out(x.size());
    rms_norm_cpu(x.data(), gamma.data(), rows, dim, eps, out.data());
    for (int r = 0; r < rows; ++r) {
      const float* row = x.data() + static_cast<long>(r) * dim;
      double squares = 0.0;
      for (int i = 0; i < dim; ++i) squares += static_cast<double>(row[i]) * row[i];
      const double inv_rms = 1.0 / std::sqrt(squares / dim + eps);
      for (int i = 0; i < dim; ++i) {
        const double expected = row[i] * inv_rms * gamma[i];
        EXPECT_NEAR(out[static_cast<std::size_t>(r) * dim + i], expected,
                    3e-7 * std::abs(expected) + 1e-30)
            << "row " << r << " column " << i;
      }
    }
    std::vector<float> in_place = x;
    rms_norm_cpu(in_place.data(), gamma.data(), rows, dim, eps, in_place.data());
    EXPECT_EQ(in_place, out);
  }
}

TEST(GatedFeedForwardCpu, TanhGeluAndProduct) {
  // torch.nn.functional.gelu(x, approximate="tanh") at a few points (float64 formula).
  std::vector<float> x = {-3.0f, -1.0f, -0.1f, 0.0f, 0.5f, 2.0f, 6.0f};
  std::vector<float> gelu = x;
  bias_activation_cpu(gelu.data(), nullptr, 1, static_cast<int>(x.size()),
                      static_cast<int>(x.size()), ActivationKind::kGeluTanh);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double v = x[i];
    const double expected =
        0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v)));
    EXPECT_NEAR(gelu[i], expected, 1e-6 * (1.0 + std::abs(expected))) << v;
  }
  // x *= y over the first cols of rows of stride ld; the padding columns stay.
  std::vector<float> a = {1, 2, 3, 9, 4, 5, 6, 9};
  const std::vector<float> b = {2, 2, 2, 7, -1, 0, 0.5f, 7};
  multiply_cpu(a.data(), b.data(), 2, 3, 4);
  EXPECT_EQ(a, (std::vector<float>{2, 4, 6, 9, -4, 0, 3, 9}));
}

}  // namespace
}  // namespace rpt::kernels
