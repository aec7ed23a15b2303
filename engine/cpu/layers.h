// Building blocks of the CPU's Transformer sub-layers (engine/cpu/transformer_ops.h): linear
// projections and LayerNorm. Stateless; thread-safe.
#pragma once

#include "engine/model.h"
#include "kernels/activation.h"

namespace rpt {

// out = in W^T + b, then the activation, in one pass. Row strides in floats; the int8 layer
// takes dense rows only.
void linear_activation(const float* in, int in_stride, int rows, const LinearWeights& layer,
                       kernels::ActivationKind activation, float* out, int out_stride);

// out = in W^T + b.
void linear_forward(const float* in,  // [rows, in_features]
                    int rows, const LinearWeights& layer,
                    float* out);  // [rows, out_features]

void layer_norm_forward(const float* in,  // [rows, d_model]
                        int rows, const LayerNormWeights& norm, float eps,
                        float* out);  // [rows, d_model]; may alias in

// x += y over `count` elements.
void add_in_place(float* x, const float* y, long count);

}  // namespace rpt
