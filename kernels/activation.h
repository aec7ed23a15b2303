// Adds a bias row to every row and applies an activation, in place (the FFN inner layer).
#pragma once

#include "kernels/stream.h"

namespace rpt::kernels {

enum class ActivationKind { kIdentity, kRelu, kGelu, kSilu };

void bias_activation_cpu(float* x,           // [rows, cols], in place
                         const float* bias,  // [cols], or nullptr for no bias
                         int rows, int cols, ActivationKind activation);

void bias_activation_cuda(float* x, const float* bias, int rows, int cols,
                          ActivationKind activation, CudaStream stream);

}  // namespace rpt::kernels
