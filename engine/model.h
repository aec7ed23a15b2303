// A loaded model: configuration, vocabularies, tokenizers and the weights arranged per layer in
// the layout the compute path wants (float32 on the CPU, Q/K/V fused, cross-attention memory
// projections of all decoder layers fused, T5 biases expanded per offset).
//
// Immutable after load; share one instance between threads and translators.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/model_config.h"
#include "engine/tensor.h"
#include "engine/tokenizer.h"
#include "engine/vocabulary.h"
#include "kernels/int8_gemm.h"

namespace rpt {

struct LinearWeights {
  Tensor weight;  // [out_features, in_features] float32; undefined once quantized
  // The weight quantized for CPU int8 compute (ModelLoadOptions::int8); null otherwise.
  std::shared_ptr<const kernels::Int8Weights> int8;
  Tensor bias;  // [out_features]; undefined when the layer has no bias
  int out_features() const { return int8 ? int8->rows() : static_cast<int>(weight.dim(0)); }
  int in_features() const { return int8 ? int8->cols() : static_cast<int>(weight.dim(1)); }
};

struct LayerNormWeights {
  Tensor gamma;  // [d_model]
  Tensor beta;   // [d_model]
};

struct SelfAttentionWeights {
  LayerNormWeights norm;
  LinearWeights qkv;     // [3 * d_model, d_model]: query rows, then key rows, then value rows
  LinearWeights output;  // [d_model, d_model]
  int max_relative_position = 0;  // k; 0: no relative term
  Tensor relative_keys;    // [2k+1, head_dim]
  Tensor relative_values;  // [2k+1, head_dim]; the same storage as relative_keys when shared
  Tensor offset_bias;  // T5: [heads, 2 * max_offset + 1], bias of offset o at [h, o + max_offset]
};

struct CrossAttentionWeights {
  LayerNormWeights norm;
  LinearWeights query;   // [d_model, d_model]
  LinearWeights output;  // [d_model, d_model]
};

struct FeedForwardWeights {
  LayerNormWeights norm;
  LinearWeights inner;  // [d_ff, d_model]
  LinearWeights outer;  // [d_model, d_ff]
};

struct EncoderLayerWeights {
  SelfAttentionWeights self_attention;
  FeedForwardWeights ffn;
};

struct DecoderLayerWeights {
  SelfAttentionWeights self_attention;
  CrossAttentionWeights cross_attention;
  FeedForwardWeights ffn;
};

struct ModelLoadOptions {
  // Verify every tensor checksum while loading.
  bool verify_checksums = true;
  // Longest source or target sequence the model will be asked to handle; sizes the T5 per-offset
  // bias tables.
  int max_sequence_length = 2048;
  // CPU int8 compute: every linear layer's weight is quantized per output row at load and its
  // float32 copy dropped (kernels/int8_gemm.h). The generator (vocabulary projection) too, when
  // int8_generator; embeddings, layer norms and relative tables stay float32 (docs/MODELS.md).
  bool int8 = false;
  bool int8_generator = true;
};

class Model {
 public:
  // Loads `directory` (docs/model-format.md); throws ModelError naming the offending file.
  static std::shared_ptr<const Model> load(const std::string& directory,
                                           const ModelLoadOptions& options = {});

  const ModelConfig& config() const { return config_; }
  const std::string& directory() const { return directory_; }
  const Vocabulary& source_vocabulary() const { return *source_vocabulary_; }
  const Vocabulary& target_vocabulary() const { return *target_vocabulary_; }
  const Tokenizer& source_tokenizer() const { return *source_tokenizer_; }
  const Tokenizer& target_tokenizer() const { return *target_tokenizer_; }
  int max_sequence_length() const { return max_sequence_length_; }
  // Bytes held by the weights in their compute layout.
  std::size_t weights_bytes() const { return weights_bytes_; }
  // "float32", "float16", "bfloat16" or "int8": the dtype of the weights file's linear layers.
  const std::string& stored_dtype() const { return stored_dtype_; }
  // Whether linear layers hold int8 weights (ModelLoadOptions::int8).
  bool int8() const { return int8_; }

  int decoder_start_id() const { return decoder_start_id_; }
  int eos_id() const { return eos_id_; }
  int pad_id() const { return pad_id_; }

  const Tensor& encoder_embeddings() const { return encoder_embeddings_; }  // [src_vocab, d]
  const Tensor& decoder_embeddings() const { return decoder_embeddings_; }  // [tgt_vocab, d]
  const std::vector<EncoderLayerWeights>& encoder_layers() const { return encoder_layers_; }
  const std::vector<DecoderLayerWeights>& decoder_layers() const { return decoder_layers_; }
  const LayerNormWeights& encoder_norm() const { return encoder_norm_; }
  const LayerNormWeights& decoder_norm() const { return decoder_norm_; }
  // Keys and values of the encoder output for every decoder layer, fused:
  // [decoder_layers * 2 * d_model, d_model]; layer l's keys at rows [2 l d, (2 l + 1) d).
  const LinearWeights& memory_key_value() const { return memory_key_value_; }
  const LinearWeights& generator() const { return generator_; }  // [tgt_vocab, d_model]

 private:
  Model() = default;
  friend class ModelLoader;

  ModelConfig config_;
  std::string directory_;
  std::unique_ptr<Vocabulary> source_vocabulary_;
  std::unique_ptr<Vocabulary> target_vocabulary_;
  std::unique_ptr<Tokenizer> source_tokenizer_;
  std::unique_ptr<Tokenizer> target_tokenizer_;
  int max_sequence_length_ = 0;
  std::size_t weights_bytes_ = 0;
  std::string stored_dtype_;
  bool int8_ = false;
  int decoder_start_id_ = 0;
  int eos_id_ = 0;
  int pad_id_ = 0;

  Tensor encoder_embeddings_;
  Tensor decoder_embeddings_;
  std::vector<EncoderLayerWeights> encoder_layers_;
  std::vector<DecoderLayerWeights> decoder_layers_;
  LayerNormWeights encoder_norm_;
  LayerNormWeights decoder_norm_;
  LinearWeights memory_key_value_;
  LinearWeights generator_;
};

}  // namespace rpt
