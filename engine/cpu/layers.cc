#include "engine/cpu/layers.h"

#include <vector>

#include "engine/scratch.h"
#include "kernels/errors.h"
#include "kernels/activation.h"
#include "kernels/gemm.h"
#include "kernels/int8_gemm.h"
#include "kernels/layer_norm.h"
#include "kernels/packed_sgemm.h"

namespace rpt {

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
  if (layer.packed) {
    kernels::packed_linear_cpu({.input = in,
                                .input_stride = in_stride,
                                .rows = rows,
                                .weights = layer.packed.get(),
                                .output = out,
                                .output_stride = out_stride});
  } else {
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
  }
  if (bias != nullptr || activation != kernels::ActivationKind::kIdentity) {
    kernels::bias_activation_cpu(out, bias, rows, layer.out_features(), out_stride, activation);
  }
}

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

}  // namespace rpt
