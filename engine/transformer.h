// The Transformer forward, composed once for every device: the encoder stack and one decoder step
// as sequences of sub-layers (embedding, layer norm, linear with its bias/activation/residual
// epilogue, attention projections around an attention core). A device implements the ops
// (TransformerOps: engine/cpu/transformer_ops.h, engine/cuda/cuda_transformer_ops.h), the
// attention core and cache included. Activations are [rows, d_model] in the device's memory and
// compute precision; attention works in attention_dim columns. Stateless; thread-safe as far as
// the ops are. A change to the math is made here, once (docs/ARCHITECTURE.md "How to add an op").
#pragma once

#include <cstddef>
#include <vector>

#include "engine/model.h"
#include "engine/transformer_weights.h"
#include "kernels/activation.h"

namespace rpt {

// The kernels' name for a model's FFN activation.
kernels::ActivationKind kernel_activation(Activation activation);

// out [rows, out_features] (row stride out_stride) = in [rows, in_features] (row stride
// in_stride) W^T + b, then the activation; with `accumulate`, added to what out holds (the
// residual).
struct LinearCall {
  const void* in = nullptr;
  int in_stride = 0;
  int rows = 0;
  void* out = nullptr;
  int out_stride = 0;
  kernels::ActivationKind activation = kernels::ActivationKind::kIdentity;
  bool accumulate = false;
};

template <class Storage>
class TransformerOps {
 public:
  virtual ~TransformerOps() = default;

  // Bytes of one activation element (4 on the CPU; the compute precision's on a GPU).
  virtual std::size_t element_bytes() const = 0;

  // out [count, d_model] = table[ids] * scale (+ the sinusoidal encoding of positions, when not
  // nullptr). ids and positions in the device's memory.
  virtual void embed(const typename Storage::Table& table, const int* ids, const int* positions,
                     int count, void* out) = 0;
  // out [rows, d_model] = LayerNorm(in), or RMS norm (ArchitectureConfig::norm); out may alias
  // in.
  virtual void norm(const typename Storage::Norm& weights, const void* in, int rows, void* out) = 0;
  virtual void linear(const typename Storage::Linear& layer, const LinearCall& call) = 0;
  // The attention cores: context [rows, A] from projected queries, keys and values, before
  // the output projection. `weights` gives the position terms (relative tables, T5 bias).
  //
  // Encoder self-attention: qkv [rows, 3 A] (query, key, value columns) of the encoder
  // batch the ops were made for; each row attends to its own sentence's rows.
  virtual void packed_self_attention(const SelfAttentionOf<Storage>& weights, const void* qkv,
                                     int rows, void* context) = 0;
  // Decoder self-attention of layer `layer`: the step's keys and values (in qkv [rows, 3 A])
  // join each row's cache, then each row attends to its cached positions.
  virtual void cached_self_attention(const SelfAttentionOf<Storage>& weights, int layer,
                                     const void* qkv, int rows, void* context) = 0;
  // Cross-attention of decoder layer `layer`: query [rows, A] over each row's sentence's
  // encoder memory.
  virtual void cross_attention(int layer, const void* query, int rows, void* context) = 0;
  // x [rows, cols] (row stride `stride`) *= y, element by element (a gated feed-forward).
  virtual void multiply(void* x, const void* y, int rows, int cols, int stride) = 0;
  // logits [rows, vocab] = x W^T + b, float32 whatever the compute precision: the vocabulary scan
  // needs the range.
  virtual void logits(const typename Storage::Linear& generator, const void* x, int rows,
                      float* out) = 0;
};

// Rows of tokens in the device's memory: ids and the position of each in its sequence.
struct TokenRows {
  const int* ids = nullptr;
  const int* positions = nullptr;
  int rows = 0;
};

// Activations the forward works in, in the device's memory.
struct ForwardBuffers {
  void* x = nullptr;        // [rows, d_model]: the residual stream; the final states at the end
  void* normed = nullptr;   // [rows, d_model]
  void* hidden = nullptr;   // [rows, hidden_stride]: the FFN's inner activations
  void* gate = nullptr;     // [rows, hidden_stride]: a gated FFN's linear half; else unused
  int hidden_stride = 0;    // >= d_ff
  void* qkv = nullptr;      // [rows, 3 A]: self-attention's projections; cross-attention's
                            // query [rows, A]
  void* context = nullptr;  // [rows, A]: an attention core's output
};

// Where the encoder writes the keys and values of rows [first_row, first_row + rows):
// out [rows, decoder_layers * 2 A], in the device's memory.
struct MemorySlice {
  int first_row = 0;
  int rows = 0;
  void* out = nullptr;
};

// The encoder stack over packed sentences (the ops know where each starts), then every decoder
// layer's cross-attention keys and values, projected straight into each slice of `memory` (one
// slice for the whole batch, or one per sentence so that each holds its own). The final states
// stay in buffers.x.
template <class Storage>
void encoder_forward(TransformerOps<Storage>& ops, const TransformerWeightsOf<Storage>& weights,
                     const ModelConfig& config, const TokenRows& tokens,
                     const ForwardBuffers& buffers, const std::vector<MemorySlice>& memory);

// One decoder step for every row (the ops know each row's cache and sentence): logits [rows,
// target_vocab], float32.
template <class Storage>
void decoder_step_forward(TransformerOps<Storage>& ops,
                          const TransformerWeightsOf<Storage>& weights, const ModelConfig& config,
                          const TokenRows& tokens, const ForwardBuffers& buffers, float* logits);

// The input checks every device makes before it computes: sentences non-empty, within the
// model's maximum length, ids in the vocabulary.
void check_encoder_input(const Model& model, const std::vector<std::vector<int>>& sources);
// A step's tokens in the target vocabulary and its positions under the maximum length. (Whether
// each row's position matches what its cache holds is the device's cache's to check.)
void check_decoder_step_input(const Model& model, const std::vector<int>& tokens,
                              const std::vector<int>& positions);

}  // namespace rpt
