// LayerNorm over the last dimension: out = (x - mean) / sqrt(var + eps) * gamma + beta; and RMS
// norm (T5's): out = x / sqrt(mean(x^2) + eps) * gamma, neither mean nor beta. Statistics in
// float32 (double accumulation on the CPU). `out` may alias `in`.
#pragma once

#include "kernels/precision.h"
#include "kernels/stream.h"

namespace rpt::kernels {

void layer_norm_cpu(const float* in,     // [rows, dim]
                    const float* gamma,  // [dim]
                    const float* beta,   // [dim]
                    int rows, int dim, float eps,
                    float* out);  // [rows, dim]

void rms_norm_cpu(const float* in,     // [rows, dim]
                  const float* gamma,  // [dim]
                  int rows, int dim, float eps,
                  float* out);  // [rows, dim]

struct LayerNormCudaArgs {
  Precision precision = Precision::kFloat32;  // of in, gamma, beta and out
  const void* in = nullptr;                   // [rows, dim]
  const void* gamma = nullptr;                // [dim]
  const void* beta = nullptr;                 // [dim]; unused with rms
  bool rms = false;                           // RMS norm: no mean, no beta
  int rows = 0;
  int dim = 0;
  float eps = 1e-6f;
  void* out = nullptr;  // [rows, dim]; may alias in
};

void layer_norm_cuda(const LayerNormCudaArgs& args, CudaStream stream);

}  // namespace rpt::kernels
