#include "engine/layers.h"

#include <vector>

#include "engine/scratch.h"
#include "kernels/errors.h"
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

// out = in W^T, then bias and activation in one pass. Row strides in floats; the int8 layer
// takes dense rows only.
void linear_activation(const float* in, int in_stride, int rows, const LinearWeights& layer,
                       kernels::ActivationKind activation, float* out, int out_stride) {
  const float* bias = layer.bias.defined() ? layer.bias.data<float>() : nullptr;
  if (layer.int8) {
    RPT_CHECK(in_stride == layer.in_features() && out_stride == layer.out_features(),
              InvalidArgument, "the int8 linear layer takes dense rows");
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
                     .lda = in_stride,
                     .b = layer.weight.data<float>(),
                     .ldb = layer.in_features(),
                     .c = out,
                     .ldc = out_stride});
  if (bias != nullptr || activation != kernels::ActivationKind::kIdentity) {
    kernels::bias_activation_cpu(out, bias, rows, layer.out_features(), out_stride, activation);
  }
}

// Row stride of the float32 FFN's inner activations. A stride of a multiple of 1 KiB (d_ff 1024:
// 4 KiB) puts the rows that BLIS's micro-kernel reads together into the same cache sets; 16
// floats more measured 1.13-1.26x on the 32- and 128-row output GEMMs (zen3 BLIS, this project's
// 2-core EPYC VM), the same at 512 rows. Addresses only: the sums are bitwise the same.
int inner_stride(const FeedForwardWeights& ffn, int d_ff) {
  constexpr int kPadding = 16;
  return ffn.inner.int8 ? d_ff : d_ff + kPadding;
}

}  // namespace

void linear_forward(const float* in, int rows, const LinearWeights& layer, float* out) {
  linear_activation(in, layer.in_features(), rows, layer, kernels::ActivationKind::kIdentity, out,
                    layer.out_features());
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
  const int stride = inner_stride(ffn, architecture.d_ff);
  ScratchFloats inner(static_cast<std::size_t>(rows) * stride);  // [rows, d_ff], row stride
  ScratchFloats out(static_cast<std::size_t>(count));
  const bool pre_norm = architecture.norm_placement == NormPlacement::kPre;
  const float* ffn_input = x;
  ScratchFloats normed;
  if (pre_norm) {
    normed.resize(static_cast<std::size_t>(count));
    layer_norm_forward(x, rows, ffn.norm, architecture.norm_eps, normed.data());
    ffn_input = normed.data();
  }
  linear_activation(ffn_input, d, rows, ffn.inner, kernel_activation(architecture.activation),
                    inner.data(), stride);
  linear_activation(inner.data(), stride, rows, ffn.outer, kernels::ActivationKind::kIdentity,
                    out.data(), d);
  add_in_place(x, out.data(), count);
  if (!pre_norm) layer_norm_forward(x, rows, ffn.norm, architecture.norm_eps, x);
}

}  // namespace rpt
