#include "engine/layers.h"

#include <vector>

#include "engine/scratch.h"
#include "kernels/activation.h"
#include "kernels/gemm.h"
#include "kernels/int8_gemm.h"
#include "kernels/layer_norm.h"

namespace rpt {

kernels::ActivationKind kernel_activation(Activation activation) {
  switch (activation) {
    case Activation::kRelu:
      return kernels::ActivationKind::kRelu;
    case Activation::kGelu:
      return kernels::ActivationKind::kGelu;
    case Activation::kSilu:
      return kernels::ActivationKind::kSilu;
  }
  return kernels::ActivationKind::kIdentity;
}

namespace {

// out = in W^T, then bias and activation in one pass.
void linear_activation(const float* in, int rows, const LinearWeights& layer,
                       kernels::ActivationKind activation, float* out) {
  const float* bias = layer.bias.defined() ? layer.bias.data<float>() : nullptr;
  if (layer.int8) {
    kernels::int8_linear_cpu({.input = in,
                              .rows = rows,
                              .weights = layer.int8.get(),
                              .bias = bias,
                              .activation = activation,
                              .output = out});
    return;
  }
  kernels::gemm_cpu({.transpose_a = false,
                     .transpose_b = true,
                     .m = rows,
                     .n = layer.out_features(),
                     .k = layer.in_features(),
                     .a = in,
                     .lda = layer.in_features(),
                     .b = layer.weight.data<float>(),
                     .ldb = layer.in_features(),
                     .c = out,
                     .ldc = layer.out_features()});
  if (bias != nullptr || activation != kernels::ActivationKind::kIdentity) {
    kernels::bias_activation_cpu(out, bias, rows, layer.out_features(), activation);
  }
}

}  // namespace

void linear_forward(const float* in, int rows, const LinearWeights& layer, float* out) {
  linear_activation(in, rows, layer, kernels::ActivationKind::kIdentity, out);
}

void layer_norm_forward(const float* in, int rows, const LayerNormWeights& norm, float eps,
                        float* out) {
  kernels::layer_norm_cpu(in, norm.gamma.data<float>(), norm.beta.data<float>(), rows,
                          static_cast<int>(norm.gamma.dim(0)), eps, out);
}

void add_in_place(float* x, const float* y, long count) {
  for (long i = 0; i < count; ++i) x[i] += y[i];
}

void feed_forward_forward(float* x, int rows, const FeedForwardWeights& ffn,
                          const ArchitectureConfig& architecture) {
  const int d = architecture.d_model;
  const long count = static_cast<long>(rows) * d;
  ScratchFloats inner(static_cast<std::size_t>(rows) * architecture.d_ff);
  ScratchFloats out(static_cast<std::size_t>(count));
  const bool pre_norm = architecture.norm_placement == NormPlacement::kPre;
  const float* ffn_input = x;
  ScratchFloats normed;
  if (pre_norm) {
    normed.resize(static_cast<std::size_t>(count));
    layer_norm_forward(x, rows, ffn.norm, architecture.norm_eps, normed.data());
    ffn_input = normed.data();
  }
  linear_activation(ffn_input, rows, ffn.inner, kernel_activation(architecture.activation),
                    inner.data());
  linear_forward(inner.data(), rows, ffn.outer, out.data());
  add_in_place(x, out.data(), count);
  if (!pre_norm) layer_norm_forward(x, rows, ffn.norm, architecture.norm_eps, x);
}

}  // namespace rpt
