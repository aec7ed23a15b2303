#include "engine/model.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>

#include "common/process_memory.h"
#include "kernels/errors.h"
#include "engine/weight_tensors.h"
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
    max_sequence_length_ = max_sequence_length;
    const int source_vocabulary = model_.source_vocabulary_->size();
    const int target_vocabulary = model_.target_vocabulary_->size();
    RPT_CHECK(!arch_.shared_embeddings || source_vocabulary == target_vocabulary, ModelError,
              "shared_embeddings needs one vocabulary size for both sides");
    for_each_weight(
        config_, source_vocabulary, target_vocabulary,
        [this](const auto& spec, auto&& member) { fill(spec, member); }, model_.weights_);
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
    if (stored.dtype() != DataType::kFloat32) weights_.release(name);  // a copy is made
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

  // The visits of for_each_weight (engine/weight_tensors.h), one per member of the weights.
  void fill(const TableSpec& spec, Tensor& table) {
    table = tensor(spec.name, spec.shape);
    if (spec.kind == TableKind::kT5Bias) {
      table = expand_t5_bias(table, spec.bidirectional, max_sequence_length_);
    }
  }
  void fill(const TableSpec&, Shared<Tensor, Tensor> table) { table.member = table.source; }

  void fill(const NormSpec& spec, LayerNormWeights& norm) {
    norm.gamma = tensor(spec.gamma_name(), {spec.size});
    if (spec.beta) norm.beta = tensor(spec.beta_name(), {spec.size});
  }

  // Reads the spec's layers; once they complete the member (Q/K/V; the memory keys and values,
  // which every decoder layer adds to), fuses them into it and finishes it.
  void fill(const LinearSpec& spec, LinearWeights& layer) {
    Parts& parts = pending_[&layer];
    for (std::size_t part = 0; part < spec.names.size(); ++part) {
      parts.weights.push_back(tensor(spec.weight_name(part), spec.weight_shape()));
      parts.biases.push_back(bias(spec, part));
    }
    if (!spec.last_part()) return;
    if (parts.weights.size() == 1) {
      layer.weight = parts.weights.front();
      layer.bias = parts.biases.front();
    } else {
      layer = fuse(parts.weights, parts.biases);
    }
    pending_.erase(&layer);
    finish(layer, spec.generator);
  }
  // The tied generator: the decoder's embeddings, and a bias of its own.
  void fill(const LinearSpec& spec, Shared<LinearWeights, Tensor> tied) {
    tied.member.weight = tied.source;
    tied.member.bias = bias(spec, 0);
    finish(tied.member, spec.generator);
  }

  // NAME.bias of the spec's `part`; undefined when the layer has none.
  Tensor bias(const LinearSpec& spec, std::size_t part) {
    const bool present = spec.bias == Bias::kRequired ||
                         (spec.bias == Bias::kIfPresent && weights_.contains(spec.bias_name(part)));
    return present ? tensor(spec.bias_name(part), spec.bias_shape()) : Tensor();
  }

  // A linear layer's weight in the layout its CPU GEMM reads: int8 (quantized, its float32
  // weight dropped), packed float32 or as it is. The generator is quantized only with
  // int8_generator.
  void finish(LinearWeights& layer, bool generator) {
    if (!(generator ? int8_generator_ : int8_)) {
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
    return_freed_memory();
  }

  void pack(LinearWeights& layer) {
    layer.packed = kernels::PackedFloat32Weights::pack(layer.weight.data<float>(),
                                                       layer.out_features(), layer.in_features());
    bytes_ += layer.packed->bytes();
    if (layer.weight.data<float>() != model_.weights_.decoder_embeddings.data<float>()) {
      bytes_ -= layer.weight.nbytes();
    }
    layer.weight = Tensor();
    return_freed_memory();
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
    // The parts, counted as they were read, are dropped once fused.
    for (const Tensor& w : weights) bytes_ -= w.nbytes();
    for (const Tensor& bias : biases) bytes_ -= bias.defined() ? bias.nbytes() : 0;
    bytes_ += fused.weight.nbytes() + (fused.bias.defined() ? fused.bias.nbytes() : 0);
    return fused;
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

  const WeightsFile& weights_;
  const ModelConfig& config_;
  const ArchitectureConfig& arch_;
  Model& model_;
  const bool int8_;
  const bool int8_generator_;
  const bool pack_float32_;
  std::size_t bytes_ = 0;
  int max_sequence_length_ = 0;
  // The layers read for each linear member not yet complete.
  struct Parts {
    std::vector<Tensor> weights;
    std::vector<Tensor> biases;  // undefined where a layer has none
  };
  std::map<const LinearWeights*, Parts> pending_;
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
  model->source_vocabulary_ = std::make_shared<const Vocabulary>(
      in_directory(directory, config.source_vocabulary), special.unk);
  model->target_vocabulary_ = std::make_shared<const Vocabulary>(
      in_directory(directory, config.target_vocabulary), special.unk);
  model->source_tokenizer_ =
      std::make_shared<const Tokenizer>(in_directory(directory, config.source_tokenizer));
  model->target_tokenizer_ =
      std::make_shared<const Tokenizer>(in_directory(directory, config.target_tokenizer));
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
  return_freed_memory();
  model->int8_ = options.int8;
  model->weights_bytes_ = loader.bytes_loaded();
  return model;
}

const ModelWeights& Model::weights() const {
  RPT_CHECK(has_weights_, InvalidArgument, "the model ", directory_,
            " was handed to a GPU engine, which keeps its weights on the device only: load it "
            "again for another engine");
  return weights_;
}

std::shared_ptr<const Model> Model::without_weights() const {
  std::shared_ptr<Model> copy(new Model(*this));
  copy->weights_ = ModelWeights();
  copy->has_weights_ = false;
  return copy;
}

}  // namespace rpt
