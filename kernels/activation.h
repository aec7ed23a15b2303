// Adds a bias row to every row and applies an activation, in place (the FFN inner layer).
#pragma once

namespace rpt::kernels {

enum class ActivationKind { kIdentity, kRelu, kGelu, kSilu };

void bias_activation_cpu(float* x,           // [rows, cols], in place
                         const float* bias,  // [cols], or nullptr for no bias
                         int rows, int cols, ActivationKind activation);

}  // namespace rpt::kernels
