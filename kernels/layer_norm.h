// LayerNorm over the last dimension: out = (x - mean) / sqrt(var + eps) * gamma + beta.
// Statistics in float32 (double accumulation on the CPU). `out` may alias `in`.
#pragma once

#include "kernels/stream.h"

namespace rpt::kernels {

void layer_norm_cpu(const float* in,     // [rows, dim]
                    const float* gamma,  // [dim]
                    const float* beta,   // [dim]
                    int rows, int dim, float eps,
                    float* out);  // [rows, dim]

void layer_norm_cuda(const float* in, const float* gamma, const float* beta, int rows, int dim,
                     float eps, float* out, CudaStream stream);

}  // namespace rpt::kernels
