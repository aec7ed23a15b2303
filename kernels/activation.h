// Adds a bias row to every row and applies an activation, in place (the FFN inner layer; with
// kIdentity, the bias of any linear layer).
#pragma once

#include "kernels/precision.h"
#include "kernels/stream.h"

namespace rpt::kernels {

// kGelu: the exact erf form; kGeluTanh: the tanh approximation (T5 v1.1's gelu_new).
enum class ActivationKind { kIdentity, kRelu, kGelu, kGeluTanh, kSilu };

void bias_activation_cpu(float* x,           // [rows, cols], row stride ld, in place
                         const float* bias,  // [cols], or nullptr for no bias
                         int rows, int cols, int ld, ActivationKind activation);

struct BiasActivationCudaArgs {
  Precision precision = Precision::kFloat32;  // of x and bias
  void* x = nullptr;                          // [rows, cols], in place
  const void* bias = nullptr;                 // [cols], or nullptr for no bias
  int rows = 0;
  int cols = 0;
  ActivationKind activation = ActivationKind::kIdentity;
};

void bias_activation_cuda(const BiasActivationCudaArgs& args, CudaStream stream);

// x [rows, cols] (row stride ld) *= y [rows, cols] (row stride ld), element by element: a gated
// feed-forward's activated half times its linear half.
void multiply_cpu(float* x, const float* y, int rows, int cols, int ld);

struct MultiplyCudaArgs {
  Precision precision = Precision::kFloat32;  // of x and y
  void* x = nullptr;                          // [rows, ld], in place
  const void* y = nullptr;                    // [rows, ld]
  int rows = 0;
  int cols = 0;
  int ld = 0;
};

void multiply_cuda(const MultiplyCudaArgs& args, CudaStream stream);

}  // namespace rpt::kernels
