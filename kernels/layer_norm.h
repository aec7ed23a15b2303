// LayerNorm over the last dimension: out = (x - mean) / sqrt(var + eps) * gamma + beta.
// Statistics in float32 (double accumulation on the CPU). `out` may alias `in`.
#pragma once

#include "kernels/precision.h"
#include "kernels/stream.h"

namespace rpt::kernels {

void layer_norm_cpu(const float* in,     // [rows, dim]
                    const float* gamma,  // [dim]
                    const float* beta,   // [dim]
                    int rows, int dim, float eps,
                    float* out);  // [rows, dim]

struct LayerNormCudaArgs {
  Precision precision = Precision::kFloat32;  // of in, gamma, beta and out
  const void* in = nullptr;     // [rows, dim]
  const void* gamma = nullptr;  // [dim]
  const void* beta = nullptr;   // [dim]
  int rows = 0;
  int dim = 0;
  float eps = 1e-6f;
  void* out = nullptr;  // [rows, dim]; may alias in
};

void layer_norm_cuda(const LayerNormCudaArgs& args, CudaStream stream);

}  // namespace rpt::kernels
