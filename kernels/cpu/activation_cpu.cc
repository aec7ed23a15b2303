#include <cmath>

#include "kernels/activation.h"
#include "kernels/cpu/gelu_tanh_cpu.h"
#include "kernels/parallel.h"

namespace rpt::kernels {
namespace {

// One loop per activation so each inner loop is branch-free and vectorises.
template <typename Function>
void apply_rows(float* x, const float* bias, int rows, int cols, int ld, Function function) {
  parallel_for(rows, 16, [&](long first, long last) {
    for (long r = first; r < last; ++r) {
      float* row = x + r * ld;
      if (bias != nullptr) {
        for (int c = 0; c < cols; ++c) row[c] = function(row[c] + bias[c]);
      } else {
        for (int c = 0; c < cols; ++c) row[c] = function(row[c]);
      }
    }
  });
}

}  // namespace

void bias_activation_cpu(float* x, const float* bias, int rows, int cols, int ld,
                         ActivationKind activation) {
  switch (activation) {
    case ActivationKind::kIdentity:
      apply_rows(x, bias, rows, cols, ld, [](float v) { return v; });
      return;
    case ActivationKind::kRelu:
      apply_rows(x, bias, rows, cols, ld, [](float v) { return v > 0.0f ? v : 0.0f; });
      return;
    case ActivationKind::kGelu:  // exact erf form, as torch.nn.functional.gelu
      apply_rows(x, bias, rows, cols, ld, [](float v) {
        return 0.5f * v * (1.0f + std::erf(v * static_cast<float>(M_SQRT1_2)));
      });
      return;
    case ActivationKind::kGeluTanh:  // as torch's gelu(approximate="tanh"), vectorised
      parallel_for(rows, 16, [&](long first, long last) {
        for (long r = first; r < last; ++r) gelu_tanh_row_cpu(x + r * ld, bias, cols);
      });
      return;
    case ActivationKind::kSilu:
      apply_rows(x, bias, rows, cols, ld, [](float v) { return v / (1.0f + std::exp(-v)); });
      return;
  }
}

void multiply_cpu(float* x, const float* y, int rows, int cols, int ld) {
  parallel_for(rows, 16, [&](long first, long last) {
    for (long r = first; r < last; ++r) {
      float* row = x + r * ld;
      const float* other = y + r * ld;
      for (int c = 0; c < cols; ++c) row[c] *= other[c];
    }
  });
}

}  // namespace rpt::kernels
