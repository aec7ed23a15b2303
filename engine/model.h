// A loaded model: configuration, vocabularies, tokenizers and the weights arranged per layer in
// the layout the compute path wants (float32 on the CPU, Q/K/V fused, cross-attention memory
// projections of all decoder layers fused, T5 biases expanded per offset; for the CPU engine,
// embedding tables as the weights file holds them).
//
// Immutable after load; share one instance between threads and translators.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/load_phases.h"
#include "engine/model_config.h"
#include "engine/tensor.h"
#include "engine/tokenizer.h"
#include "engine/transformer_weights.h"
#include "engine/vocabulary.h"
#include "kernels/int8_gemm.h"
#include "kernels/packed_sgemm.h"

namespace rpt {

struct LinearWeights {
  Tensor weight;  // [out_features, in_features] float32; undefined once quantized or packed
  // The weight quantized for CPU int8 compute (ModelLoadOptions::int8); null otherwise.
  std::shared_ptr<const kernels::Int8Weights> int8;
  // The float32 weight packed for the CPU's float32 GEMM where it takes packed weights
  // (ModelLoadOptions::cpu_layout, kernels/packed_sgemm.h); null otherwise.
  std::shared_ptr<const kernels::PackedFloat32Weights> packed;
  Tensor bias;  // [out_features]; undefined when the layer has no bias
  int out_features() const {
    return int8 ? int8->rows() : packed ? packed->rows() : static_cast<int>(weight.dim(0));
  }
  int in_features() const {
    return int8 ? int8->cols() : packed ? packed->cols() : static_cast<int>(weight.dim(1));
  }
};

struct LayerNormWeights {
  Tensor gamma;  // [d_model]
  Tensor beta;   // [d_model]
};

// How the CPU holds weights: float32 host tensors (linear layers int8 when quantized or packed;
// embedding tables, with ModelLoadOptions::cpu_layout, in the weights file's own dtype).
struct HostStorage {
  using Linear = LinearWeights;
  using Norm = LayerNormWeights;
  using Table = Tensor;
};

using SelfAttentionWeights = SelfAttentionOf<HostStorage>;
using CrossAttentionWeights = CrossAttentionOf<HostStorage>;
using FeedForwardWeights = FeedForwardOf<HostStorage>;
using EncoderLayerWeights = EncoderLayerOf<HostStorage>;
using DecoderLayerWeights = DecoderLayerOf<HostStorage>;
using ModelWeights = TransformerWeightsOf<HostStorage>;

struct ModelLoadOptions {
  // Verify every tensor checksum while loading.
  bool verify_checksums = true;
  // Longest source or target sequence the model will be asked to handle; sizes the T5 per-offset
  // bias tables.
  int max_sequence_length = 2048;
  // CPU int8 compute: every linear layer's weight is quantized per output row at load and its
  // float32 copy dropped (kernels/int8_gemm.h). The generator (vocabulary projection) too, when
  // int8_generator; embeddings, layer norms and relative tables are not quantized
  // (docs/MODELS.md).
  bool int8 = false;
  bool int8_generator = true;
  // Weights laid out for the CPU engine: float32 linear layers packed once where the CPU's
  // float32 GEMM takes packed weights (kernels/packed_sgemm.h: oneDNN on AVX-512), their plain
  // copy dropped; embedding tables kept as the weights file holds them (float16 or bfloat16
  // rows converted, exactly, as they are looked up; pages resident as rows are), not copied to
  // float32, unless a tied generator multiplies by the table itself in float32. false for a
  // model bound for a GPU, whose upload reads float32 tables and the plain weights.
  bool cpu_layout = true;
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
  // Where load() spent its time.
  const LoadPhases& load_phases() const { return load_phases_; }
  // Bytes held by the weights in their compute layout.
  std::size_t weights_bytes() const { return weights_bytes_; }
  // "float32", "float16", "bfloat16" or "int8": the dtype of the weights file's linear layers.
  const std::string& stored_dtype() const { return stored_dtype_; }
  // Whether linear layers hold int8 weights (ModelLoadOptions::int8).
  bool int8() const { return int8_; }

  int decoder_start_id() const { return decoder_start_id_; }
  int eos_id() const { return eos_id_; }
  int pad_id() const { return pad_id_; }
  // The directions the model translates (ModelConfig::language_pairs; at least one).
  const std::vector<LanguagePair>& language_pairs() const { return config_.language_pairs; }
  // The source ids of language pair `pair`'s prefix (T5's "translate English to German: ",
  // MADLAD-400's "<2de> "), which every source of that pair starts with; empty for most models.
  // Throws InvalidArgument for a pair the model does not have.
  const std::vector<int>& source_prefix_ids(std::size_t pair) const;
  // The most ids a source holds beside its text's own: the longest prefix and the eos
  // (append_source_eos). An input limit leaves room for them within max_sequence_length.
  int max_added_source_ids() const { return max_added_source_ids_; }

  // Every weight, in the arrangement both devices compose (engine/transformer_weights.h); throws
  // InvalidArgument on a copy without them.
  const ModelWeights& weights() const;
  // False for without_weights()'s copies.
  bool has_weights() const { return has_weights_; }
  // This model without its host weights (everything else shared): what a GPU engine keeps once
  // it has uploaded them, so that a process serving from the GPU does not also hold 4 bytes a
  // parameter in host memory. No engine can be created from it.
  std::shared_ptr<const Model> without_weights() const;
  // [vocabulary, d_model]: float32, or with ModelLoadOptions::cpu_layout the file's dtype.
  const Tensor& encoder_embeddings() const { return weights_.encoder_embeddings; }
  const Tensor& decoder_embeddings() const { return weights_.decoder_embeddings; }
  const std::vector<EncoderLayerWeights>& encoder_layers() const { return weights_.encoder_layers; }
  const std::vector<DecoderLayerWeights>& decoder_layers() const { return weights_.decoder_layers; }
  const LayerNormWeights& encoder_norm() const { return weights_.encoder_norm; }
  const LayerNormWeights& decoder_norm() const { return weights_.decoder_norm; }
  const LinearWeights& memory_key_value() const { return weights_.memory_key_value; }
  const LinearWeights& generator() const { return weights_.generator; }

 private:
  Model() = default;
  Model(const Model&) = default;
  friend class ModelLoader;
  // Each language pair's prefix as source ids, and max_added_source_ids_; throws ModelError for a
  // prefix with pieces the source vocabulary lacks or one that fills max_sequence_length.
  void read_source_prefixes(int max_sequence_length);

  ModelConfig config_;
  std::string directory_;
  std::shared_ptr<const Vocabulary> source_vocabulary_;
  std::shared_ptr<const Vocabulary> target_vocabulary_;
  std::shared_ptr<const Tokenizer> source_tokenizer_;
  std::shared_ptr<const Tokenizer> target_tokenizer_;
  int max_sequence_length_ = 0;
  std::size_t weights_bytes_ = 0;
  LoadPhases load_phases_;
  std::string stored_dtype_;
  bool int8_ = false;
  int decoder_start_id_ = 0;
  int eos_id_ = 0;
  int pad_id_ = 0;
  std::vector<std::vector<int>> source_prefix_ids_;  // per language pair
  int max_added_source_ids_ = 0;

  ModelWeights weights_;
  bool has_weights_ = true;
};

}  // namespace rpt
