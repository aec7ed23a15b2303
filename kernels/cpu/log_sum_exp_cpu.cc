#include "kernels/cpu/log_sum_exp_cpu.h"

#include <cfloat>
#include <cmath>

#include "kernels/cpu/vector_clones.h"

namespace rpt::kernels {

// AVX2 clones where the CPU has it: 8-wide exp and max instead of SSE's 4.

RPT_VECTOR_CLONES float max_cpu(const float* x, int count) {
  float max_value = -FLT_MAX;  // finite: this file is built with -ffinite-math-only
  for (int i = 0; i < count; ++i) max_value = x[i] > max_value ? x[i] : max_value;
  return max_value;
}

RPT_VECTOR_CLONES float log_sum_exp_cpu(const float* x, int count) {
  const float max_value = max_cpu(x, count);
  float sum = 0.0f;
  for (int i = 0; i < count; ++i) sum += std::exp(x[i] - max_value);
  return max_value + std::log(sum);
}

}  // namespace rpt::kernels
