#include "kernels/cpu/log_sum_exp_cpu.h"

#include <cfloat>
#include <cmath>

namespace rpt::kernels {

float log_sum_exp_cpu(const float* x, int count) {
  float max_value = -FLT_MAX;  // finite: this file is built with -ffinite-math-only
  for (int i = 0; i < count; ++i) max_value = x[i] > max_value ? x[i] : max_value;
  float sum = 0.0f;
  for (int i = 0; i < count; ++i) sum += std::exp(x[i] - max_value);
  return max_value + std::log(sum);
}

}  // namespace rpt::kernels
