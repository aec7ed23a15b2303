#include "engine/cuda/cuda_transformer_ops.h"

#include <cmath>

#include "kernels/activation.h"
#include "kernels/cuda/cublas_handle.h"
#include "kernels/embedding.h"
#include "kernels/errors.h"
#include "kernels/fused_attention.h"
#include "kernels/gemm.h"
#include "kernels/layer_norm.h"

namespace rpt {

using kernels::Precision;

void CudaTransformerOps::embed(const DeviceTable& table, const int* ids, const int* positions,
                               int count, void* out) {
  kernels::embedding_cuda(
      {.precision = precision_,
       .ids = ids,
       .count = count,
       .table = table.data,
       .dim = arch_.d_model,
       .scale = arch_.embedding_scale ? std::sqrt(static_cast<float>(arch_.d_model)) : 1.0f,
       .positions = positions,
       .out = out},
      stream_);
}

void CudaTransformerOps::norm(const DeviceLayerNorm& weights, const void* in, int rows, void* out) {
  kernels::layer_norm_cuda({.precision = precision_,
                            .in = in,
                            .gamma = weights.gamma,
                            .beta = weights.beta,
                            .rms = arch_.norm == NormType::kRmsNorm,
                            .rows = rows,
                            .dim = arch_.d_model,
                            .eps = arch_.norm_eps,
                            .out = out},
                           stream_);
}

void CudaTransformerOps::multiply(void* x, const void* y, int rows, int cols, int stride) {
  kernels::multiply_cuda(
      {.precision = precision_, .x = x, .y = y, .rows = rows, .cols = cols, .ld = stride}, stream_);
}

void CudaTransformerOps::multiply_by_weight(const DeviceLinear& layer, const void* in, int rows,
                                            Precision out_precision, float beta, void* out) {
  kernels::gemm_cuda({.input_precision = precision_,
                      .output_precision = out_precision,
                      .transpose_b = true,
                      .m = rows,
                      .n = layer.outputs,
                      .k = layer.inputs,
                      .a = in,
                      .lda = layer.inputs,
                      .b = layer.weight,
                      .ldb = layer.inputs,
                      .beta = beta,
                      .c = out,
                      .ldc = layer.outputs},
                     cublas_);
}

void CudaTransformerOps::linear(const DeviceLinear& layer, const LinearCall& call) {
  // The bias/activation kernel takes dense rows; the GPU's buffers are dense.
  RPT_CHECK(call.in_stride == layer.inputs && call.out_stride == layer.outputs, InvalidArgument,
            "the GPU linear layer takes dense rows");
  multiply_by_weight(layer, call.in, call.rows, precision_, call.accumulate ? 1.0f : 0.0f,
                     call.out);
  if (layer.bias != nullptr || call.activation != kernels::ActivationKind::kIdentity) {
    kernels::bias_activation_cuda({.precision = precision_,
                                   .x = call.out,
                                   .bias = layer.bias,
                                   .rows = call.rows,
                                   .cols = layer.outputs,
                                   .activation = call.activation},
                                  stream_);
  }
}

void CudaTransformerOps::attend(const SelfAttentionOf<DeviceStorage>* relative, int rows,
                                const void* queries, int query_stride, const void* const* sequences,
                                long key_shift, long value_shift, int position_stride,
                                const int* key_counts, void* context) const {
  kernels::FusedAttentionArgs args;
  args.precision = precision_;
  args.rows = rows;
  args.heads = arch_.heads;
  args.head_dim = arch_.head_dim();
  args.scale =
      arch_.scale_attention ? 1.0f / std::sqrt(static_cast<float>(arch_.head_dim())) : 1.0f;
  args.queries = queries;
  args.query_stride = query_stride;
  args.sequences = sequences;
  args.key_shift = key_shift;
  args.value_shift = value_shift;
  args.position_stride = position_stride;
  args.key_counts = key_counts;
  args.query_positions = context_.positions;
  if (relative != nullptr) {
    args.max_relative_position = relative->max_relative_position;
    if (relative->max_relative_position > 0) {
      args.relative_keys = relative->relative_keys.data;
      args.relative_values = relative->relative_values.data;
    }
    args.offset_bias = static_cast<const float*>(relative->offset_bias.data);
    args.offset_bias_width = relative->offset_bias.cols;
  }
  args.out = context;
  args.out_stride = arch_.attention_dim();
  kernels::fused_attention_cuda(args, stream_, context_.kernel);
}

void CudaTransformerOps::packed_self_attention(const SelfAttentionOf<DeviceStorage>& weights,
                                               const void* qkv, int rows, void* context) {
  RPT_CHECK(context_.sentences != nullptr, InvalidArgument, "no encoder batch for the attention");
  const int d = arch_.attention_dim();  // A
  // Every row reads its own sentence's keys and values in qkv (context_.sentences point into it).
  attend(&weights, rows, qkv, 3 * d, context_.sentences, d, 2L * d, 3 * d,
         context_.sentence_lengths, context);
}

void CudaTransformerOps::cached_self_attention(const SelfAttentionOf<DeviceStorage>& weights,
                                               int layer, const void* qkv, int rows,
                                               void* context) {
  RPT_CHECK(context_.cache_rows != nullptr, InvalidArgument, "no decoder step for the attention");
  const int d = arch_.attention_dim();  // A
  // This step's key and value join the row's cache, then the row attends to positions 0..t.
  kernels::cache_append_cuda({.precision = precision_,
                              .layout = context_.layout,
                              .layer = layer,
                              .rows = rows,
                              .qkv = qkv,
                              .qkv_stride = 3 * d,
                              .positions = context_.positions,
                              .cache = context_.cache},
                             stream_);
  const long layer_shift = static_cast<long>(layer) * context_.layout.layer_elements();
  attend(&weights, rows, qkv, 3 * d, context_.cache_rows, layer_shift, layer_shift + d, 2 * d,
         context_.cache_counts, context);
}

void CudaTransformerOps::cross_attention(int layer, const void* query, int rows, void* context) {
  RPT_CHECK(context_.memory_rows != nullptr, InvalidArgument,
            "no encoder memory for the attention");
  const int d = arch_.attention_dim();  // A
  // Every beam reads its sentence's memory, this layer's slice; no relative term.
  const long layer_shift = static_cast<long>(layer) * 2 * d;
  attend(nullptr, rows, query, d, context_.memory_rows, layer_shift, layer_shift + d,
         context_.memory_stride, context_.memory_lengths, context);
}

void CudaTransformerOps::logits(const DeviceLinear& generator, const void* x, int rows,
                                float* out) {
  multiply_by_weight(generator, x, rows, Precision::kFloat32, 0.0f, out);
  if (generator.bias != nullptr) {  // float32 (engine/transformer_weights.h)
    kernels::bias_activation_cuda({.precision = Precision::kFloat32,
                                   .x = out,
                                   .bias = generator.bias,
                                   .rows = rows,
                                   .cols = generator.outputs},
                                  stream_);
  }
}

}  // namespace rpt
