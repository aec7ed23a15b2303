#include "kernels/cpu/gelu_tanh_cpu.h"

#include <cmath>

#include "kernels/cpu/vector_clones.h"

namespace rpt::kernels {
namespace {

inline float gelu_tanh(float x) {
  constexpr float kSqrt2OverPi = 0.7978845608028654f;
  constexpr float kLimit = 9.0f;  // 2u(9) = 66.4: exp(66.4) is finite
  const float clamped = x < -kLimit ? -kLimit : (x > kLimit ? kLimit : x);
  const float u = kSqrt2OverPi * (clamped + 0.044715f * clamped * clamped * clamped);
  return x / (1.0f + std::exp(-2.0f * u));
}

}  // namespace

RPT_VECTOR_CLONES void gelu_tanh_row_cpu(float* row, const float* bias, int count) {
  if (bias != nullptr) {
    for (int i = 0; i < count; ++i) row[i] = gelu_tanh(row[i] + bias[i]);
  } else {
    for (int i = 0; i < count; ++i) row[i] = gelu_tanh(row[i]);
  }
}

}  // namespace rpt::kernels
