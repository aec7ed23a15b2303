// The GPU's Transformer sub-layers (engine/transformer.h) over the CUDA kernels and cuBLAS, on one
// stream: activations in the compute precision, attention by the fused kernel (one op for the
// three attentions), logits in float32. Made for one encoder batch or one decoder step: the
// attention context names where each row's sequence lies (device arrays) and the scratch the
// attention works in. Launches only (no synchronisation, no allocation): a decoder step's
// launches can be captured as a CUDA graph.
#pragma once

#include "engine/device_storage.h"
#include "engine/transformer.h"
#include "kernels/fused_attention.h"
#include "kernels/kv_cache.h"
#include "kernels/precision.h"
#include "kernels/stream.h"

namespace rpt {

namespace kernels {
class CublasHandle;
}  // namespace kernels

struct CudaAttentionContext {
  kernels::CudaAttentionKernel kernel = kernels::CudaAttentionKernel::kKeySplit;
  const int* positions = nullptr;  // [rows]: each row's position in its sequence (device)

  // Encoder: row t's sentence starts at sentences[t] (a row of the forward's qkv buffer) and has
  // sentence_lengths[t] tokens.
  const void* const* sentences = nullptr;
  const int* sentence_lengths = nullptr;

  // Decoder step: row r's cache at cache_rows[r] in `cache` ([rows, layout]), cache_counts[r] =
  // positions[r] + 1 positions once the step's own is appended; its sentence's encoder memory at
  // memory_rows[r], memory_lengths[r] tokens of memory_stride elements.
  kernels::CacheLayout layout{};
  void* cache = nullptr;
  const void* const* cache_rows = nullptr;
  const int* cache_counts = nullptr;
  const void* const* memory_rows = nullptr;
  const int* memory_lengths = nullptr;
  int memory_stride = 0;
};

class CudaTransformerOps final : public TransformerOps<DeviceStorage> {
 public:
  CudaTransformerOps(const ArchitectureConfig& architecture, kernels::Precision precision,
                     kernels::CudaStream stream, kernels::CublasHandle* cublas,
                     const CudaAttentionContext& context)
      : arch_(architecture),
        precision_(precision),
        stream_(stream),
        cublas_(cublas),
        context_(context) {}

  std::size_t element_bytes() const override { return kernels::precision_size(precision_); }
  void embed(const DeviceTable& table, const int* ids, const int* positions, int count,
             void* out) override;
  void norm(const DeviceLayerNorm& weights, const void* in, int rows, void* out) override;
  void linear(const DeviceLinear& layer, const LinearCall& call) override;
  void packed_self_attention(const SelfAttentionOf<DeviceStorage>& weights, const void* qkv,
                             int rows, void* context) override;
  void cached_self_attention(const SelfAttentionOf<DeviceStorage>& weights, int layer,
                             const void* qkv, int rows, void* context) override;
  void cross_attention(int layer, const void* query, int rows, void* context) override;
  void multiply(void* x, const void* y, int rows, int cols, int stride) override;
  void logits(const DeviceLinear& generator, const void* x, int rows, float* out) override;

 private:
  // out [rows, outputs] = in [rows, inputs] W^T + beta out (no bias): every weight GEMM, in the
  // compute precision or, for the logits, into float32.
  void multiply_by_weight(const DeviceLinear& layer, const void* in, int rows,
                          kernels::Precision out_precision, float beta, void* out);
  // context [rows, A] = attention of `rows` queries (row stride query_stride) over the keys
  // and values at key_shift / value_shift from each row's sequence; Shaw or T5 terms from
  // `relative` when not nullptr.
  void attend(const SelfAttentionOf<DeviceStorage>* relative, int rows, const void* queries,
              int query_stride, const void* const* sequences, long key_shift, long value_shift,
              int position_stride, const int* key_counts, void* context) const;

  const ArchitectureConfig& arch_;
  kernels::Precision precision_;
  kernels::CudaStream stream_;
  kernels::CublasHandle* cublas_;
  CudaAttentionContext context_;
};

}  // namespace rpt
