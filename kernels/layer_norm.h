// LayerNorm over the last dimension: out = (x - mean) / sqrt(var + eps) * gamma + beta.
// Statistics in float32 (double accumulation on the CPU). `out` may alias `in`.
#pragma once

namespace rpt::kernels {

void layer_norm_cpu(const float* in,     // [rows, dim]
                    const float* gamma,  // [dim]
                    const float* beta,   // [dim]
                    int rows, int dim, float eps,
                    float* out);  // [rows, dim]

}  // namespace rpt::kernels
