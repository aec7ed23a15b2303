#include <cmath>

#include "kernels/layer_norm.h"
#include "kernels/parallel.h"

namespace rpt::kernels {

void layer_norm_cpu(const float* in, const float* gamma, const float* beta, int rows, int dim,
                    float eps, float* out) {
  parallel_for(rows, 16, [&](long first, long last) {
    for (long r = first; r < last; ++r) {
      const float* x = in + static_cast<long>(r) * dim;
      float* y = out + static_cast<long>(r) * dim;
      double sum = 0.0;
      for (int i = 0; i < dim; ++i) sum += x[i];
      const double mean = sum / dim;
      double squares = 0.0;
      for (int i = 0; i < dim; ++i) {
        const double centered = x[i] - mean;
        squares += centered * centered;
      }
      const float inv_std = static_cast<float>(1.0 / std::sqrt(squares / dim + eps));
      const float mean_f = static_cast<float>(mean);
      for (int i = 0; i < dim; ++i) y[i] = (x[i] - mean_f) * inv_std * gamma[i] + beta[i];
    }
  });
}

}  // namespace rpt::kernels
