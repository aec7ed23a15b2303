#include <cmath>

#include "kernels/cpu/vector_clones.h"
#include "kernels/layer_norm.h"
#include "kernels/parallel.h"

namespace rpt::kernels {
namespace {

// Statistics accumulate in double over kLanes partial sums, added in a fixed order: the lanes
// break the chain of dependent additions and vectorize (a single double accumulator left layer
// norm scalar and latency-bound: docs/PERFORMANCE.md "rpt vs CTranslate2 after batch invariance
// and the host-side cuts"), and a row's result depends on nothing but the row.
constexpr int kLanes = 8;

RPT_VECTOR_CLONES double sum(const float* x, int count) {
  double lanes[kLanes] = {};
  int i = 0;
  for (; i + kLanes <= count; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) lanes[j] += x[i + j];
  }
  double total = 0.0;
  for (; i < count; ++i) total += x[i];
  for (int j = 0; j < kLanes; ++j) total += lanes[j];
  return total;
}

RPT_VECTOR_CLONES double squared_deviations(const float* x, int count, double mean) {
  double lanes[kLanes] = {};
  int i = 0;
  for (; i + kLanes <= count; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) {
      const double centered = x[i + j] - mean;
      lanes[j] += centered * centered;
    }
  }
  double total = 0.0;
  for (; i < count; ++i) total += (x[i] - mean) * (x[i] - mean);
  for (int j = 0; j < kLanes; ++j) total += lanes[j];
  return total;
}

RPT_VECTOR_CLONES void scale(const float* x, const float* gamma, int count, float inv_rms,
                             float* y) {
  for (int i = 0; i < count; ++i) y[i] = x[i] * inv_rms * gamma[i];
}

RPT_VECTOR_CLONES void normalize(const float* x, const float* gamma, const float* beta, int count,
                                 float mean, float inv_std, float* y) {
  for (int i = 0; i < count; ++i) y[i] = (x[i] - mean) * inv_std * gamma[i] + beta[i];
}

}  // namespace

void layer_norm_cpu(const float* in, const float* gamma, const float* beta, int rows, int dim,
                    float eps, float* out) {
  parallel_for(rows, 16, [&](long first, long last) {
    for (long r = first; r < last; ++r) {
      const float* x = in + r * dim;
      const double mean = sum(x, dim) / dim;
      const double variance = squared_deviations(x, dim, mean) / dim;
      const auto inv_std = static_cast<float>(1.0 / std::sqrt(variance + eps));
      normalize(x, gamma, beta, dim, static_cast<float>(mean), inv_std, out + r * dim);
    }
  });
}

void rms_norm_cpu(const float* in, const float* gamma, int rows, int dim, float eps, float* out) {
  parallel_for(rows, 16, [&](long first, long last) {
    for (long r = first; r < last; ++r) {
      const float* x = in + r * dim;
      const double mean_square = squared_deviations(x, dim, 0.0) / dim;
      const auto inv_rms = static_cast<float>(1.0 / std::sqrt(mean_square + eps));
      scale(x, gamma, dim, inv_rms, out + r * dim);
    }
  });
}

}  // namespace rpt::kernels
