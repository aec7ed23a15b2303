// Building blocks of the Transformer layers on the CPU: linear projections, LayerNorm and the
// position-wise feed-forward block. Stateless; thread-safe.
#pragma once

#include "engine/model.h"
#include "kernels/activation.h"

namespace rpt {

// The kernels' name for a model's FFN activation.
kernels::ActivationKind kernel_activation(Activation activation);

// out = in W^T + b.
void linear_forward(const float* in,  // [rows, in_features]
                    int rows, const LinearWeights& layer,
                    float* out);  // [rows, out_features]

void layer_norm_forward(const float* in,  // [rows, d_model]
                        int rows, const LayerNormWeights& norm, float eps,
                        float* out);  // [rows, d_model]; may alias in

// The FFN sub-layer with its residual, in place on x:
//   pre-norm:  x = x + W2 act(W1 LN(x))
//   post-norm: x = LN(x + W2 act(W1 x))
void feed_forward_forward(float* x,  // [rows, d_model], in place
                          int rows, const FeedForwardWeights& ffn,
                          const ArchitectureConfig& architecture);

// x += y over `count` elements.
void add_in_place(float* x, const float* y, long count);

}  // namespace rpt
