// Layer norm and RMS norm, and the feed-forward's pieces (bias + activation, the element-wise
// product), on each device (tests/support/op_targets.h). The norms: within float rounding of a
// float64 evaluation over dimensions that exercise the vector lanes and the tail; in place and one
// row alone give the same bits. The activations: their float64 formulas. The product: exact.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <random>
#include <vector>

#include "kernels/activation.h"
#include "kernels/layer_norm.h"
#include "tests/support/op_targets.h"

namespace rpt::kernels {
namespace {

using testing::op_targets;

class NormTest : public testing::OpTargetTest {
 protected:
  // The norm of x [rows, dim] on the target, out of place. In place and the last row alone must
  // give the same bits.
  std::vector<float> normalise(bool rms, const std::vector<float>& x,
                               const std::vector<float>& gamma, const std::vector<float>& beta,
                               int rows, int dim, float eps) {
    Array in = floats(x), g = floats(gamma), b = floats(beta), out = floats(x);
    auto norm = [&](Array& source, Array& target, int count, long first_row) {
      void* from = source.at(first_row * dim);
      void* to = target.at(first_row * dim);
      run(
          [&] {
            if (rms) {
              rms_norm_cpu(static_cast<const float*>(from), g.as<float>(), count, dim, eps,
                           static_cast<float*>(to));
            } else {
              layer_norm_cpu(static_cast<const float*>(from), g.as<float>(), b.as<float>(), count,
                             dim, eps, static_cast<float*>(to));
            }
          },
          [&](auto stream) {
            layer_norm_cuda({.precision = precision(),
                             .in = from,
                             .gamma = g.data(),
                             .beta = rms ? nullptr : b.data(),
                             .rms = rms,
                             .rows = count,
                             .dim = dim,
                             .eps = eps,
                             .out = to},
                            stream);
          });
    };
    const std::size_t size = x.size();
    norm(in, out, rows, 0);
    const std::vector<float> result = read_floats(out, size);
    Array last_row = floats(x);
    norm(in, last_row, 1, rows - 1);
    const std::vector<float> last = read_floats(last_row, size);
    EXPECT_EQ(std::vector<float>(last.end() - dim, last.end()),
              std::vector<float>(result.end() - dim, result.end()))
        << "the last row alone";
    norm(in, in, rows, 0);
    EXPECT_EQ(read_floats(in, size), result) << "in place";
    return result;
  }

  // Inputs off centre (mean 0.5, deviation 3); gamma and beta N(0, 1), which keeps the outputs
  // within a few units, as in a model.
  std::vector<float> random_vector(std::size_t n, float mean = 0.0f, float deviation = 1.0f) {
    std::normal_distribution<float> normal(mean, deviation);
    std::vector<float> v(n);
    for (float& x : v) x = normal(random_);
    return rounded(v);
  }

  std::mt19937 random_{5};
};

// Dimensions below, at and past the vector width, a block's 256 threads and several per thread.
constexpr int kDims[] = {1, 7, 8, 13, 256, 300, 1023};

TEST_P(NormTest, LayerNormMatchesFloat64WithinFloatRounding) {
  for (const int dim : kDims) {
    SCOPED_TRACE(dim);
    const int rows = 5;
    const auto x = random_vector(static_cast<std::size_t>(rows) * dim, 0.5f, 3.0f);
    const auto gamma = random_vector(dim), beta = random_vector(dim);
    const float eps = 1e-6f;
    const auto out = normalise(false, x, gamma, beta, rows, dim, eps);
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
        EXPECT_NEAR(out[static_cast<std::size_t>(r) * dim + i], expected,
                    tolerance(expected, 4e-7 * scale + 1e-30))
            << "row " << r << " column " << i;
      }
    }
  }
}

TEST_P(NormTest, RmsNormMatchesFloat64WithinFloatRounding) {
  for (const int dim : kDims) {
    SCOPED_TRACE(dim);
    const int rows = 4;
    const auto x = random_vector(static_cast<std::size_t>(rows) * dim, 0.5f, 3.0f);
    const auto gamma = random_vector(dim);
    const float eps = 1e-6f;
    const auto out = normalise(true, x, gamma, {}, rows, dim, eps);
    for (int r = 0; r < rows; ++r) {
      const float* row = x.data() + static_cast<long>(r) * dim;
      double squares = 0.0;
      for (int i = 0; i < dim; ++i) squares += static_cast<double>(row[i]) * row[i];
      const double inv_rms = 1.0 / std::sqrt(squares / dim + eps);
      for (int i = 0; i < dim; ++i) {
        const double expected = row[i] * inv_rms * gamma[i];
        EXPECT_NEAR(out[static_cast<std::size_t>(r) * dim + i], expected,
                    tolerance(expected, 3e-7 * std::abs(expected) + 1e-30))
            << "row " << r << " column " << i;
      }
    }
  }
}

RPT_OP_TARGET_INSTANCES(NormTest, op_targets());

double activate(ActivationKind activation, double v) {
  switch (activation) {
    case ActivationKind::kRelu:
      return v > 0.0 ? v : 0.0;
    case ActivationKind::kGelu:  // torch.nn.functional.gelu
      return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
    case ActivationKind::kGeluTanh:  // torch.nn.functional.gelu(x, approximate="tanh")
      return 0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v)));
    case ActivationKind::kSilu:
      return v / (1.0 + std::exp(-v));
    case ActivationKind::kIdentity:
      break;
  }
  return v;
}

class FeedForwardTest : public testing::OpTargetTest {
 protected:
  // x [rows, cols] (+ bias), activated on the target in place.
  std::vector<float> bias_activation(const std::vector<float>& x, const std::vector<float>* bias,
                                     int rows, int cols, ActivationKind activation) {
    Array dx = floats(x), db = floats(bias != nullptr ? *bias : std::vector<float>{});
    const bool with_bias = bias != nullptr;
    run(
        [&] {
          bias_activation_cpu(dx.as<float>(), with_bias ? db.as<float>() : nullptr, rows, cols,
                              cols, activation);
        },
        [&](auto stream) {
          bias_activation_cuda({.precision = precision(),
                                .x = dx.data(),
                                .bias = with_bias ? db.data() : nullptr,
                                .rows = rows,
                                .cols = cols,
                                .activation = activation},
                               stream);
        });
    return read_floats(dx, x.size());
  }
  // x *= y over the first cols of rows of stride ld, on the target.
  std::vector<float> multiply(const std::vector<float>& x, const std::vector<float>& y, int rows,
                              int cols, int ld) {
    Array dx = floats(x), dy = floats(y);
    run([&] { multiply_cpu(dx.as<float>(), dy.as<float>(), rows, cols, ld); },
        [&](auto stream) {
          multiply_cuda({.precision = precision(),
                         .x = dx.data(),
                         .y = dy.data(),
                         .rows = rows,
                         .cols = cols,
                         .ld = ld},
                        stream);
        });
    return read_floats(dx, x.size());
  }
};

// Each activation of (x + bias), with and without the bias: its float64 formula, within a few
// float32 roundings (1e-6 relative to max(1, |expected|)); the CPU's tanh GELU is vectorised.
TEST_P(FeedForwardTest, BiasActivationMatchesFloat64) {
  std::mt19937 random(7);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  const int rows = 5, cols = 333;
  for (auto activation : {ActivationKind::kIdentity, ActivationKind::kRelu, ActivationKind::kGelu,
                          ActivationKind::kGeluTanh, ActivationKind::kSilu}) {
    for (const bool with_bias : {true, false}) {
      SCOPED_TRACE(::testing::Message() << "activation " << static_cast<int>(activation)
                                        << (with_bias ? " with bias" : " without bias"));
      std::vector<float> x(static_cast<std::size_t>(rows) * cols), bias(cols);
      for (float& v : x) v = normal(random);
      for (float& v : bias) v = normal(random);
      x = rounded(x);
      bias = rounded(bias);
      const auto out = bias_activation(x, with_bias ? &bias : nullptr, rows, cols, activation);
      for (std::size_t i = 0; i < x.size(); ++i) {
        const double v = static_cast<double>(x[i]) + (with_bias ? bias[i % cols] : 0.0f);
        const double expected = activate(activation, v);
        EXPECT_NEAR(out[i], expected, tolerance(expected, 1e-6 * (1.0 + std::abs(expected))))
            << "at " << i << ", x + bias " << v;
      }
    }
  }
}

// The tanh GELU at points of its tails and around zero.
TEST_P(FeedForwardTest, TanhGeluAtTailsAndAroundZero) {
  const auto x = rounded({-3.0f, -1.0f, -0.1f, 0.0f, 0.5f, 2.0f, 6.0f});
  const auto out =
      bias_activation(x, nullptr, 1, static_cast<int>(x.size()), ActivationKind::kGeluTanh);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double expected = activate(ActivationKind::kGeluTanh, x[i]);
    EXPECT_NEAR(out[i], expected, tolerance(expected, 1e-6 * (1.0 + std::abs(expected)))) << x[i];
  }
}

// x *= y: the float32 product of the stored values, rounded once to the precision (exact: the
// product of two stored values is exact in float32); the padding columns past cols stay.
TEST_P(FeedForwardTest, MultiplyIsTheRoundedProduct) {
  EXPECT_EQ(multiply({1, 2, 3, 9, 4, 5, 6, 9}, {2, 2, 2, 7, -1, 0, 0.5f, 7}, 2, 3, 4),
            (std::vector<float>{2, 4, 6, 9, -4, 0, 3, 9}));

  std::mt19937 random(8);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  const int rows = 5, cols = 333, ld = 340;
  std::vector<float> x(static_cast<std::size_t>(rows) * ld), y(x.size());
  for (float& v : x) v = normal(random);
  for (float& v : y) v = normal(random);
  x = rounded(x);
  y = rounded(y);
  std::vector<float> expected = x;
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      const std::size_t i = static_cast<std::size_t>(r) * ld + c;
      expected[i] = x[i] * y[i];
    }
  }
  EXPECT_EQ(multiply(x, y, rows, cols, ld), rounded(expected));
}

RPT_OP_TARGET_INSTANCES(FeedForwardTest, op_targets());

}  // namespace
}  // namespace rpt::kernels
