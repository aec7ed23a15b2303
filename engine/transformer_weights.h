// The arrangement of a model's weights, written once for every device: `Storage` names how a
// device holds a linear layer, a layer norm and a table (engine/model.h: HostStorage,
// engine/cuda/device_weights.h: DeviceStorage). The compute path's arrangement, not the
// checkpoint's: Q/K/V fused, every decoder layer's cross-attention memory projections fused,
// relative tables shared by heads and sequences, T5 biases expanded per offset. Which of the
// weights file's tensors fill each member: engine/weight_tensors.h (for_each_weight).
#pragma once

#include <vector>

namespace rpt {

template <class Storage>
struct SelfAttentionOf {
  typename Storage::Norm norm;
  // A = heads * head_dim (ArchitectureConfig::attention_dim), d_model for most models.
  typename Storage::Linear qkv;             // [3 A, d_model]: query rows, key rows, value rows
  typename Storage::Linear output;          // [d_model, A]
  int max_relative_position = 0;            // k; 0: no relative term
  typename Storage::Table relative_keys;    // [2k+1, head_dim]
  typename Storage::Table relative_values;  // [2k+1, head_dim]; may share relative_keys' storage
  // T5: [heads, 2 * max_offset + 1] float32 on every device; the bias of offset o at
  // [h, o + max_offset].
  typename Storage::Table offset_bias;
};

template <class Storage>
struct CrossAttentionOf {
  typename Storage::Norm norm;
  typename Storage::Linear query;   // [A, d_model]
  typename Storage::Linear output;  // [d_model, A]
};

template <class Storage>
struct FeedForwardOf {
  typename Storage::Norm norm;
  typename Storage::Linear gate;   // gated FFN only: [d_ff, d_model], activated
  typename Storage::Linear inner;  // [d_ff, d_model]: activated, or the gate's linear partner
  typename Storage::Linear outer;  // [d_model, d_ff]
};

template <class Storage>
struct EncoderLayerOf {
  SelfAttentionOf<Storage> self_attention;
  FeedForwardOf<Storage> ffn;
};

template <class Storage>
struct DecoderLayerOf {
  SelfAttentionOf<Storage> self_attention;
  CrossAttentionOf<Storage> cross_attention;
  FeedForwardOf<Storage> ffn;
};

template <class Storage>
struct TransformerWeightsOf {
  typename Storage::Table encoder_embeddings;  // [source_vocab, d_model]
  typename Storage::Table decoder_embeddings;  // [target_vocab, d_model]
  std::vector<EncoderLayerOf<Storage>> encoder_layers;
  std::vector<DecoderLayerOf<Storage>> decoder_layers;
  typename Storage::Norm encoder_norm;  // pre-norm models only
  typename Storage::Norm decoder_norm;
  // Keys and values of the encoder output for every decoder layer, fused:
  // [decoder_layers * 2 A, d_model]; layer l's keys at rows [2 l A, (2 l + 1) A).
  typename Storage::Linear memory_key_value;
  // [target_vocab, d_model]; its bias float32 on every device (the logits are float32).
  typename Storage::Linear generator;
};

}  // namespace rpt
