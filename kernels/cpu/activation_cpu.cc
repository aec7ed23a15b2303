#include <cmath>

#include "kernels/activation.h"

namespace rpt::kernels {
namespace {

inline float activate(float v, ActivationKind activation) {
  switch (activation) {
    case ActivationKind::kRelu:
      return v > 0.0f ? v : 0.0f;
    case ActivationKind::kGelu:  // exact erf form, as torch.nn.functional.gelu
      return 0.5f * v * (1.0f + std::erf(v * static_cast<float>(M_SQRT1_2)));
    case ActivationKind::kSilu:
      return v / (1.0f + std::exp(-v));
    case ActivationKind::kIdentity:
      break;
  }
  return v;
}

}  // namespace

void bias_activation_cpu(float* x, const float* bias, int rows, int cols,
                         ActivationKind activation) {
  for (int r = 0; r < rows; ++r) {
    float* row = x + static_cast<long>(r) * cols;
    for (int c = 0; c < cols; ++c) {
      row[c] = activate(bias ? row[c] + bias[c] : row[c], activation);
    }
  }
}

}  // namespace rpt::kernels
