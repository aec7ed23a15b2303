#include "engine/model.h"

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "kernels/errors.h"
#include "engine/weights_file.h"
#include "kernels/position.h"

namespace rpt {

// Builds a Model from a weights file: converts to float32, checks every shape against the
// config, fuses projections.
class ModelLoader {
 public:
  // With `int8`, each linear layer is quantized as soon as it is loaded (and fused) and its
  // float32 weight dropped, so the float32 copies of all layers never exist at once (holding them
  // all made loading peak above the float32 model's footprint: docs/PERFORMANCE.md "int8 on the
  // CPU, and where rpt-translate's memory went").
  ModelLoader(const WeightsFile& weights, const ModelConfig& config, Model& model, bool int8,
              bool int8_generator, bool pack_float32)
      : weights_(weights),
        config_(config),
        arch_(config.architecture),
        model_(model),
        int8_(int8),
        int8_generator_(int8_generator),
        pack_float32_(pack_float32) {}

  void load(int max_sequence_length) {
    const int d = arch_.d_model;
    const int attention_dim = arch_.attention_dim();
    const int target_vocab = model_.target_vocabulary_->size();
    model_.weights_.decoder_embeddings = tensor("decoder.embeddings", {target_vocab, d});
    model_.weights_.encoder_embeddings =
        arch_.shared_embeddings
            ? model_.weights_.decoder_embeddings
            : tensor("encoder.embeddings", {model_.source_vocabulary_->size(), d});
    RPT_CHECK(!arch_.shared_embeddings ||
                  model_.source_vocabulary_->size() == model_.target_vocabulary_->size(),
              ModelError, "shared_embeddings needs one vocabulary size for both sides");

    const int encoder_k = config_.position.encoder_max_relative_position;
    const int decoder_k = config_.position.decoder_max_relative_position;
    for (int i = 0; i < arch_.encoder_layers; ++i) {
      const std::string prefix = "encoder.layer_" + std::to_string(i) + ".";
      EncoderLayerWeights layer;
      layer.self_attention = self_attention(prefix + "self_attention.", encoder_k,
                                            /*bidirectional=*/true, max_sequence_length);
      layer.ffn = feed_forward(prefix + "ffn.");
      for (LinearWeights* each : {&layer.self_attention.qkv, &layer.self_attention.output,
                                  &layer.ffn.inner, &layer.ffn.outer}) {
        finish(*each);
      }
      if (arch_.gated_ffn) finish(layer.ffn.gate);
      model_.weights_.encoder_layers.push_back(std::move(layer));
    }
    std::vector<Tensor> memory_weights;
    std::vector<Tensor> memory_biases;
    for (int i = 0; i < arch_.decoder_layers; ++i) {
      const std::string prefix = "decoder.layer_" + std::to_string(i) + ".";
      DecoderLayerWeights layer;
      layer.self_attention = self_attention(prefix + "self_attention.", decoder_k,
                                            /*bidirectional=*/false, max_sequence_length);
      const std::string cross = prefix + "cross_attention.";
      layer.cross_attention.norm = layer_norm(cross + "norm");
      layer.cross_attention.query = linear(cross + "query", attention_dim, d, arch_.qkv_bias);
      layer.cross_attention.output = linear(cross + "output", d, attention_dim, arch_.qkv_bias);
      for (const char* part : {"key", "value"}) {
        LinearWeights projection = linear(cross + part, attention_dim, d, arch_.qkv_bias);
        memory_weights.push_back(projection.weight);
        memory_biases.push_back(projection.bias);
      }
      layer.ffn = feed_forward(prefix + "ffn.");
      for (LinearWeights* each :
           {&layer.self_attention.qkv, &layer.self_attention.output, &layer.cross_attention.query,
            &layer.cross_attention.output, &layer.ffn.inner, &layer.ffn.outer}) {
        finish(*each);
      }
      if (arch_.gated_ffn) finish(layer.ffn.gate);
      model_.weights_.decoder_layers.push_back(std::move(layer));
    }
    model_.weights_.memory_key_value = fuse(memory_weights, memory_biases);
    memory_weights.clear();
    finish(model_.weights_.memory_key_value);
    if (arch_.norm_placement == NormPlacement::kPre) {
      model_.weights_.encoder_norm = layer_norm("encoder.norm");
      model_.weights_.decoder_norm = layer_norm("decoder.norm");
    }
    model_.weights_.generator.weight = arch_.tied_generator
                                           ? model_.weights_.decoder_embeddings
                                           : tensor("generator.weight", {target_vocab, d});
    if (weights_.contains("generator.bias")) {
      model_.weights_.generator.bias = tensor("generator.bias", {target_vocab});
    }
    if (int8_generator_) {
      finish(model_.weights_.generator);
    } else if (pack_float32_) {
      pack(model_.weights_.generator);
    }
  }

  std::size_t bytes_loaded() const { return bytes_; }

 private:
  Tensor tensor(const std::string& name, const Shape& expected) {
    Tensor stored = weights_.get(name);
    RPT_CHECK(stored.shape() == expected, ModelError, weights_.path(), ": tensor ", name,
              " has shape ", shape_string(stored.shape()), ", the config implies ",
              shape_string(expected));
    // float32 files are used in place (memory-mapped); other dtypes are converted once.
    Tensor out = stored.dtype() == DataType::kFloat32 ? stored
                 : stored.dtype() == DataType::kInt8  ? dequantized(name, stored)
                                                      : stored.to_float32();
    bytes_ += out.nbytes();
    return out;
  }

  // An int8 weight [rows, cols] times its per-row `NAME_scale` [rows], in float32. Quantizing it
  // again at load (CPU int8) gives back the same integers: each row's largest value is 127 steps.
  Tensor dequantized(const std::string& name, const Tensor& stored) {
    RPT_CHECK(stored.shape().size() == 2, ModelError, weights_.path(), ": int8 tensor ", name,
              " is not a matrix");
    const Tensor scales = weights_.get(name + "_scale");
    RPT_CHECK(scales.dtype() == DataType::kFloat32 && scales.shape() == Shape{stored.dim(0)},
              ModelError, weights_.path(), ": ", name, "_scale must be float32 [", stored.dim(0),
              "]");
    Tensor out = Tensor::empty(stored.shape());
    const auto* values = stored.data<std::int8_t>();
    const float* scale = scales.data<float>();
    float* result = out.data<float>();
    const std::int64_t cols = stored.dim(1);
    for (std::int64_t r = 0; r < stored.dim(0); ++r) {
      for (std::int64_t c = 0; c < cols; ++c) {
        result[r * cols + c] = scale[r] * static_cast<float>(values[r * cols + c]);
      }
    }
    return out;
  }

  // A linear layer as it will be used: in int8, quantized and its float32 weight dropped.
  // A linear layer's weight in the layout its CPU GEMM reads: int8, packed float32 or as it is.
  void finish(LinearWeights& layer) {
    if (!int8_) {
      if (pack_float32_) pack(layer);
      return;
    }
    try {
      layer.int8 = kernels::Int8Weights::quantize(layer.weight.data<float>(), layer.out_features(),
                                                  layer.in_features());
    } catch (const InvalidArgument& error) {
      RPT_THROW(ModelError, weights_.path(), ": cannot quantize to int8: ", error.message());
    }
    bytes_ += layer.int8->bytes();
    // A tied generator's weight is also the embedding table, which stays counted.
    if (layer.weight.data<float>() != model_.weights_.decoder_embeddings.data<float>()) {
      bytes_ -= layer.weight.nbytes();
    }
    layer.weight = Tensor();
  }

  void pack(LinearWeights& layer) {
    layer.packed = kernels::PackedFloat32Weights::pack(layer.weight.data<float>(),
                                                       layer.out_features(), layer.in_features());
    bytes_ += layer.packed->bytes();
    if (layer.weight.data<float>() != model_.weights_.decoder_embeddings.data<float>()) {
      bytes_ -= layer.weight.nbytes();
    }
    layer.weight = Tensor();
  }

  LayerNormWeights layer_norm(const std::string& name) {
    if (arch_.norm == NormType::kRmsNorm) return {tensor(name + ".gamma", {arch_.d_model}), {}};
    return {tensor(name + ".gamma", {arch_.d_model}), tensor(name + ".beta", {arch_.d_model})};
  }

  LinearWeights linear(const std::string& name, int out, int in, bool has_bias) {
    LinearWeights layer;
    layer.weight = tensor(name + ".weight", {out, in});
    if (has_bias) layer.bias = tensor(name + ".bias", {out});
    return layer;
  }

  // Stacks weights [out_i, in] into [sum out_i, in] (and biases likewise).
  LinearWeights fuse(const std::vector<Tensor>& weights, const std::vector<Tensor>& biases) {
    std::int64_t rows = 0;
    for (const Tensor& w : weights) rows += w.dim(0);
    const std::int64_t in = weights.front().dim(1);
    LinearWeights fused;
    fused.weight = Tensor::empty({rows, in});
    float* out = fused.weight.data<float>();
    for (const Tensor& w : weights) {
      std::memcpy(out, w.data<float>(), w.nbytes());
      out += w.numel();
    }
    if (biases.front().defined()) {
      fused.bias = Tensor::empty({rows});
      float* b = fused.bias.data<float>();
      for (const Tensor& bias : biases) {
        std::memcpy(b, bias.data<float>(), bias.nbytes());
        b += bias.numel();
      }
    }
    bytes_ += fused.weight.nbytes() + (fused.bias.defined() ? fused.bias.nbytes() : 0);
    return fused;
  }

  SelfAttentionWeights self_attention(const std::string& prefix, int k, bool bidirectional,
                                      int max_sequence_length) {
    const int d = arch_.d_model;
    const int attention_dim = arch_.attention_dim();
    SelfAttentionWeights attention;
    attention.norm = layer_norm(prefix + "norm");
    std::vector<Tensor> weights;
    std::vector<Tensor> biases;
    for (const char* part : {"query", "key", "value"}) {
      LinearWeights projection = linear(prefix + part, attention_dim, d, arch_.qkv_bias);
      weights.push_back(projection.weight);
      biases.push_back(projection.bias);
    }
    attention.qkv = fuse(weights, biases);
    attention.output = linear(prefix + "output", d, attention_dim, arch_.qkv_bias);

    const PositionConfig& position = config_.position;
    if (position.type == PositionType::kRelative && k > 0) {
      attention.max_relative_position = k;
      attention.relative_keys = tensor(prefix + "relative_keys", {2 * k + 1, arch_.head_dim()});
      attention.relative_values =
          position.separate_relative_values
              ? tensor(prefix + "relative_values", {2 * k + 1, arch_.head_dim()})
              : attention.relative_keys;
    } else if (position.type == PositionType::kT5Bucket) {
      const Tensor table =
          tensor(prefix + "relative_bias", {position.buckets, arch_.heads});  // [buckets, heads]
      attention.offset_bias = expand_t5_bias(table, bidirectional, max_sequence_length);
    }
    return attention;
  }

  // Precomputes, once per model, the bias of every offset: [heads, 2 * max_offset + 1].
  Tensor expand_t5_bias(const Tensor& table, bool bidirectional, int max_offset) {
    const PositionConfig& position = config_.position;
    const int width = 2 * max_offset + 1;
    Tensor expanded = Tensor::empty({arch_.heads, width});
    const float* bias = table.data<float>();
    float* out = expanded.data<float>();
    for (int offset = -max_offset; offset <= max_offset; ++offset) {
      const int bucket =
          kernels::t5_bucket(offset, bidirectional, position.buckets, position.max_distance);
      for (int h = 0; h < arch_.heads; ++h) {
        out[static_cast<long>(h) * width + offset + max_offset] = bias[bucket * arch_.heads + h];
      }
    }
    bytes_ += expanded.nbytes();
    return expanded;
  }

  FeedForwardWeights feed_forward(const std::string& prefix) {
    FeedForwardWeights ffn;
    ffn.norm = layer_norm(prefix + "norm");
    if (arch_.gated_ffn)
      ffn.gate = linear(prefix + "gate", arch_.d_ff, arch_.d_model, arch_.ffn_bias);
    ffn.inner = linear(prefix + "inner", arch_.d_ff, arch_.d_model, arch_.ffn_bias);
    ffn.outer = linear(prefix + "outer", arch_.d_model, arch_.d_ff, arch_.ffn_bias);
    return ffn;
  }

  const WeightsFile& weights_;
  const ModelConfig& config_;
  const ArchitectureConfig& arch_;
  Model& model_;
  const bool int8_;
  const bool int8_generator_;
  const bool pack_float32_;
  std::size_t bytes_ = 0;
};

namespace {

std::string in_directory(const std::string& directory, const std::string& file) {
  return file.empty() ? file : (std::filesystem::path(directory) / file).string();
}

int required_id(const Vocabulary& vocabulary, const std::string& token, const char* role) {
  RPT_CHECK(vocabulary.contains(token), ModelError, "target vocabulary has no ", role, " token '",
            token, "'");
  return vocabulary.to_id(token);
}

}  // namespace

const std::vector<int>& Model::source_prefix_ids(std::size_t pair) const {
  RPT_CHECK(pair < source_prefix_ids_.size(), InvalidArgument, "language pair ", pair,
            " is not one of the model's ", source_prefix_ids_.size());
  return source_prefix_ids_[pair];
}

void Model::read_source_prefixes(int max_sequence_length) {
  const std::string config_file = (std::filesystem::path(directory_) / "config.json").string();
  const int eos = config_.append_source_eos ? 1 : 0;
  const int unknown = source_vocabulary_->unk_id();
  for (const LanguagePair& pair : config_.language_pairs) {
    std::vector<int>& ids = source_prefix_ids_.emplace_back();
    for (const std::string& piece : source_tokenizer_->encode(pair.prefix)) {
      const int id = source_vocabulary_->to_id(piece);
      // A prefix the model cannot read (a misspelt "<2xx>" token) would translate, wrongly.
      RPT_CHECK(id != unknown || piece == config_.special_tokens.unk, ModelError, config_file,
                ": the prefix '", pair.prefix, "' of language pair ", pair.name(), " has '", piece,
                "', which the source vocabulary does not have");
      ids.push_back(id);
    }
    max_added_source_ids_ = std::max(max_added_source_ids_, static_cast<int>(ids.size()) + eos);
  }
  RPT_CHECK(max_added_source_ids_ < max_sequence_length, ModelError, config_file,
            ": a source prefix of ", max_added_source_ids_ - eos,
            " ids leaves no room for text within the maximum sequence length ",
            max_sequence_length);
}

std::shared_ptr<const Model> Model::load(const std::string& directory,
                                         const ModelLoadOptions& options) {
  RPT_CHECK(std::filesystem::is_directory(directory), ModelError, "model directory ", directory,
            " does not exist");
  RPT_CHECK(options.max_sequence_length > 0, InvalidArgument,
            "max_sequence_length must be positive");
  std::shared_ptr<Model> model(new Model());
  model->directory_ = directory;
  model->config_ = ModelConfig::load(directory);
  const ModelConfig& config = model->config_;
  const SpecialTokens& special = config.special_tokens;
  model->source_vocabulary_ =
      std::make_unique<Vocabulary>(in_directory(directory, config.source_vocabulary), special.unk);
  model->target_vocabulary_ =
      std::make_unique<Vocabulary>(in_directory(directory, config.target_vocabulary), special.unk);
  model->source_tokenizer_ =
      std::make_unique<Tokenizer>(in_directory(directory, config.source_tokenizer));
  model->target_tokenizer_ =
      std::make_unique<Tokenizer>(in_directory(directory, config.target_tokenizer));
  const Vocabulary& target = *model->target_vocabulary_;
  model->decoder_start_id_ = required_id(target, config.decoder_start_token, "decoder start");
  model->eos_id_ = required_id(target, special.eos, "end-of-sentence");
  model->pad_id_ = target.contains(special.pad) ? target.to_id(special.pad) : -1;
  model->max_sequence_length_ = options.max_sequence_length;
  model->read_source_prefixes(options.max_sequence_length);

  const WeightsFile weights(in_directory(directory, config.weights_file),
                            WeightsFileOptions{.verify_checksums = options.verify_checksums});
  // The linear layers' dtype names the file (int8 files keep their embeddings in float16).
  const std::string first_linear = "decoder.layer_0.ffn.inner.weight";
  model->stored_dtype_ = std::string(dtype_name(
      weights.get(weights.contains(first_linear) ? first_linear : "decoder.embeddings").dtype()));
  ModelLoader loader(weights, config, *model, options.int8, options.int8 && options.int8_generator,
                     options.cpu_layout && kernels::float32_linear_packed());
  loader.load(options.max_sequence_length);
  model->int8_ = options.int8;
  model->weights_bytes_ = loader.bytes_loaded();
  return model;
}

}  // namespace rpt
