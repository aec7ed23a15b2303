// Adds a bias row to every row and applies an activation, in place (the FFN inner layer; with
// kIdentity, the bias of any linear layer).
#pragma once

#include "kernels/precision.h"
#include "kernels/stream.h"

namespace rpt::kernels {

enum class ActivationKind { kIdentity, kRelu, kGelu, kSilu };

void bias_activation_cpu(float* x,           // [rows, cols], row stride ld, in place
                         const float* bias,  // [cols], or nullptr for no bias
                         int rows, int cols, int ld, ActivationKind activation);

struct BiasActivationCudaArgs {
  Precision precision = Precision::kFloat32;  // of x and bias
  void* x = nullptr;           // [rows, cols], in place
  const void* bias = nullptr;  // [cols], or nullptr for no bias
  int rows = 0;
  int cols = 0;
  ActivationKind activation = ActivationKind::kIdentity;
};

void bias_activation_cuda(const BiasActivationCudaArgs& args, CudaStream stream);

}  // namespace rpt::kernels
