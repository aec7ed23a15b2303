// The CPU's Transformer sub-layers (engine/transformer.h) over the host kernels: float32
// activations, linear layers through the chosen GEMM (or the int8 path when quantized), attention
// by engine/cpu/attention.h. Made for one encoder batch or one decoder step: the attention context
// names the batch's sentences, or the step's cache history and encoder memory.
#pragma once

#include <vector>

#include "engine/cpu/attention.h"
#include "engine/scratch.h"
#include "engine/transformer.h"

namespace rpt {

struct CpuAttentionContext {
  // Encoder: sentence b is rows offsets[b] .. offsets[b + 1].
  const std::vector<int>* offsets = nullptr;
  // Decoder step: each row's cached positions, the attention work plan, each row group's memory.
  const StepHistory* history = nullptr;
  const StepAttentionPlan* plan = nullptr;
  const std::vector<MemoryGroup>* memory = nullptr;
};

// The activations a CPU forward over `rows` rows works in (ForwardBuffers) but x, which the
// caller owns: each written whole before it is read.
class CpuForwardScratch {
 public:
  CpuForwardScratch(const Model& model, int rows);
  ForwardBuffers buffers(float* x);

 private:
  int hidden_stride_;  // the FFN's inner rows, padded for float32 GEMMs
  ScratchFloats normed_, hidden_, gate_, qkv_, context_;
};

class CpuTransformerOps final : public TransformerOps<HostStorage> {
 public:
  CpuTransformerOps(const ArchitectureConfig& architecture, const CpuAttentionContext& context)
      : arch_(architecture), context_(context) {}

  std::size_t element_bytes() const override { return sizeof(float); }
  void embed(const Tensor& table, const int* ids, const int* positions, int count,
             void* out) override;
  void norm(const LayerNormWeights& weights, const void* in, int rows, void* out) override;
  void linear(const LinearWeights& layer, const LinearCall& call) override;
  void packed_self_attention(const SelfAttentionWeights& weights, const void* qkv, int rows,
                             void* context) override;
  void cached_self_attention(const SelfAttentionWeights& weights, int layer, const void* qkv,
                             int rows, void* context) override;
  void cross_attention(int layer, const void* query, int rows, void* context) override;
  void multiply(void* x, const void* y, int rows, int cols, int stride) override;
  void logits(const LinearWeights& generator, const void* x, int rows, float* out) override;

 private:
  // [count] floats of `buffer`, grown when needed.
  static float* scratch(ScratchFloats& buffer, long count);

  const ArchitectureConfig& arch_;
  CpuAttentionContext context_;
  ScratchFloats linear_out_;  // a residual linear layer's output before the add
};

}  // namespace rpt
