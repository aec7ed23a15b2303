#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/log_softmax.h"

namespace rpt::kernels {

void log_softmax_cpu(float* x, int rows, int cols) {
  for (int r = 0; r < rows; ++r) {
    float* row = x + static_cast<long>(r) * cols;
    float max_value = -std::numeric_limits<float>::infinity();
    for (int c = 0; c < cols; ++c) max_value = std::max(max_value, row[c]);
    float sum = 0.0f;
    for (int c = 0; c < cols; ++c) sum += std::exp(row[c] - max_value);
    const float log_normalizer = max_value + std::log(sum);
    for (int c = 0; c < cols; ++c) row[c] -= log_normalizer;
  }
}

}  // namespace rpt::kernels
