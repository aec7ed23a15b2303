#include "engine/cpu/transformer_ops.h"

#include <cmath>

#include "engine/cpu/layers.h"
#include "engine/scratch.h"
#include "kernels/activation.h"
#include "kernels/embedding.h"
#include "kernels/layer_norm.h"
#include "kernels/errors.h"

namespace rpt {
namespace {

const float* floats(const void* p) { return static_cast<const float*>(p); }
float* floats(void* p) { return static_cast<float*>(p); }

}  // namespace

float* CpuTransformerOps::scratch(ScratchFloats& buffer, long count) {
  if (buffer.size() < static_cast<std::size_t>(count))
    buffer.resize(static_cast<std::size_t>(count));
  return buffer.data();
}

namespace {

int hidden_stride(const Model& model) {
  // A stride of a multiple of 1 KiB (d_ff 1024: 4 KiB) puts the rows that BLIS's micro-kernel
  // reads together into the same cache sets; 16 floats more spreads them (the measured gain on
  // the output GEMMs: docs/PERFORMANCE.md "rpt vs CTranslate2 with packed int8 and own
  // attention loops"). Addresses only: the sums are bitwise the same.
  // The int8 layers take dense rows.
  constexpr int kPadding = 16;
  const int d_ff = model.config().architecture.d_ff;
  return model.int8() ? d_ff : d_ff + kPadding;
}

}  // namespace

CpuForwardScratch::CpuForwardScratch(const Model& model, int rows)
    : hidden_stride_(hidden_stride(model)),
      normed_(static_cast<std::size_t>(rows) * model.config().architecture.d_model),
      hidden_(static_cast<std::size_t>(rows) * hidden_stride_),
      gate_(model.config().architecture.gated_ffn ? hidden_.size() : 0),
      qkv_(static_cast<std::size_t>(rows) * 3 * model.config().architecture.attention_dim()),
      context_(qkv_.size() / 3) {}

ForwardBuffers CpuForwardScratch::buffers(float* x) {
  return {.x = x,
          .normed = normed_.data(),
          .hidden = hidden_.data(),
          .gate = gate_.data(),
          .hidden_stride = hidden_stride_,
          .qkv = qkv_.data(),
          .context = context_.data()};
}

void CpuTransformerOps::embed(const Tensor& table, const int* ids, const int* positions, int count,
                              void* out) {
  // A table in the weights file's 16-bit form (engine/model.h): each row converted, exactly.
  const bool float32 = table.dtype() == DataType::kFloat32;
  if (!float32) {
    for (int t = 0; t < count; ++t) {
      table.slice_rows(ids[t], ids[t] + 1)
          .to_float32(floats(out) + static_cast<long>(t) * arch_.d_model);
    }
  }
  kernels::embedding_cpu(
      {.ids = ids,
       .count = count,
       .table = float32 ? table.data<float>() : nullptr,
       .vocab = static_cast<int>(table.dim(0)),
       .dim = arch_.d_model,
       .scale = arch_.embedding_scale ? std::sqrt(static_cast<float>(arch_.d_model)) : 1.0f,
       .positions = positions,
       .out = floats(out)});
}

void CpuTransformerOps::norm(const LayerNormWeights& weights, const void* in, int rows, void* out) {
  if (arch_.norm == NormType::kRmsNorm) {
    kernels::rms_norm_cpu(floats(in), weights.gamma.data<float>(), rows, arch_.d_model,
                          arch_.norm_eps, floats(out));
    return;
  }
  layer_norm_forward(floats(in), rows, weights, arch_.norm_eps, floats(out));
}

void CpuTransformerOps::multiply(void* x, const void* y, int rows, int cols, int stride) {
  kernels::multiply_cpu(floats(x), floats(y), rows, cols, stride);
}

void CpuTransformerOps::linear(const LinearWeights& layer, const LinearCall& call) {
  if (!call.accumulate) {
    linear_activation(floats(call.in), call.in_stride, call.rows, layer, call.activation,
                      floats(call.out), call.out_stride);
    return;
  }
  // The residual: computed apart, then added (a GEMM's beta = 1 would round differently on some
  // kernels; this keeps the CPU's sums where they were).
  RPT_CHECK(call.out_stride == layer.out_features(), InvalidArgument,
            "a residual linear layer writes dense rows");
  const long count = static_cast<long>(call.rows) * layer.out_features();
  float* out = scratch(linear_out_, count);
  linear_activation(floats(call.in), call.in_stride, call.rows, layer, call.activation, out,
                    layer.out_features());
  add_in_place(floats(call.out), out, count);
}

void CpuTransformerOps::packed_self_attention(const SelfAttentionWeights& weights, const void* qkv,
                                              int rows, void* context) {
  RPT_CHECK(context_.offsets != nullptr && context_.offsets->back() == rows, InvalidArgument,
            "no encoder batch of ", rows, " rows for the attention");
  self_attention_forward(weights, arch_, floats(qkv), *context_.offsets, floats(context));
}

void CpuTransformerOps::cached_self_attention(const SelfAttentionWeights& weights, int layer,
                                              const void* qkv, int rows, void* context) {
  RPT_CHECK(
      context_.history != nullptr && context_.plan != nullptr && context_.history->rows() == rows,
      InvalidArgument, "no decoder step of ", rows, " rows for the attention");
  self_attention_step(weights, arch_, floats(qkv), *context_.history, *context_.plan, layer,
                      floats(context));
}

void CpuTransformerOps::cross_attention(int layer, const void* query, int rows, void* context) {
  RPT_CHECK(context_.memory != nullptr && context_.plan != nullptr &&
                static_cast<int>(context_.plan->memory_group.size()) == rows,
            InvalidArgument, "no encoder memory of ", rows, " rows for the attention");
  cross_attention_step(arch_, floats(query), *context_.memory, *context_.plan, layer,
                       floats(context));
}

void CpuTransformerOps::logits(const LinearWeights& generator, const void* x, int rows,
                               float* out) {
  linear_forward(floats(x), rows, generator, out);
}

}  // namespace rpt
