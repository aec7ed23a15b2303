#include "tests/support/weights_writer.h"

#include <zlib.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>

#include "engine/dtype.h"
#include "kernels/int8_gemm.h"

namespace rpt::testing {
namespace {

void append_le(std::vector<unsigned char>& out, std::uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<unsigned char>(value >> (8 * i)));
}

std::vector<unsigned char> encode(const NamedTensor& tensor) {
  std::vector<unsigned char> bytes;
  if (tensor.dtype == "float16") {
    for (float v : tensor.values) append_le(bytes, float_to_half(v), 2);
  } else if (tensor.dtype == "int8") {
    for (float v : tensor.values)
      bytes.push_back(static_cast<unsigned char>(static_cast<std::int8_t>(v)));
  } else {
    bytes.resize(tensor.values.size() * sizeof(float));
    std::memcpy(bytes.data(), tensor.values.data(), bytes.size());
  }
  return bytes;
}

}  // namespace

std::vector<unsigned char> write_weights(const std::string& path,
                                         const std::vector<NamedTensor>& tensors,
                                         std::uint32_t version) {
  std::vector<std::vector<unsigned char>> payloads;
  for (const NamedTensor& t : tensors) payloads.push_back(encode(t));
  // Offsets depend on the header length, which depends on the offsets: iterate to a fixpoint.
  std::string header;
  std::vector<std::uint64_t> offsets(tensors.size());
  std::size_t header_guess = 0;
  for (int attempt = 0; attempt < 4; ++attempt) {
    std::uint64_t offset = 24 + header_guess;
    nlohmann::json entries = nlohmann::json::array();
    for (std::size_t i = 0; i < tensors.size(); ++i) {
      offset = (offset + 63) / 64 * 64;
      offsets[i] = offset;
      entries.push_back(
          {{"name", tensors[i].name},
           {"dtype", tensors[i].dtype},
           {"shape", tensors[i].shape},
           {"offset", offset},
           {"nbytes", payloads[i].size()},
           {"crc32", crc32(0L, payloads[i].data(), static_cast<uInt>(payloads[i].size()))}});
      offset += payloads[i].size();
    }
    header = nlohmann::json{{"tensors", entries}}.dump();
    if (header.size() <= header_guess) break;
    header_guess = header.size() + 256;
  }
  header.resize(header_guess, ' ');  // JSON allows trailing white space
  std::vector<unsigned char> file = {'R', 'P', 'T', 'W'};
  append_le(file, version, 4);
  append_le(file, header.size(), 8);
  append_le(
      file,
      crc32(0L, reinterpret_cast<const Bytef*>(header.data()), static_cast<uInt>(header.size())),
      4);
  append_le(file, 0, 4);
  file.insert(file.end(), header.begin(), header.end());
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    file.resize(offsets[i], 0);
    file.insert(file.end(), payloads[i].begin(), payloads[i].end());
  }
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(file.data()), static_cast<std::streamsize>(file.size()));
  return file;
}

SyntheticModelOptions relative_model_options(const ArchitectureConfig& architecture, int k) {
  SyntheticModelOptions options;
  options.config.architecture = architecture;
  options.config.position.type = PositionType::kRelative;
  options.config.position.encoder_max_relative_position = k;
  options.config.position.decoder_max_relative_position = k;
  return options;
}

std::string make_temp_directory(const std::string& prefix) {
  static std::mt19937_64 random(std::random_device{}());
  const auto path =
      std::filesystem::temp_directory_path() / (prefix + "-" + std::to_string(random()));
  std::filesystem::create_directories(path);
  return path.string();
}

namespace {

class TensorFactory {
 public:
  TensorFactory(std::uint32_t seed, std::string dtype) : random_(seed), dtype_(std::move(dtype)) {}

  void random(const std::string& name, const Shape& shape, float scale) {
    std::normal_distribution<float> normal(0.0f, scale);
    NamedTensor t{name, dtype_ == "int8" ? "float32" : dtype_, shape, {}};
    t.values.resize(static_cast<std::size_t>(shape_numel(shape)));
    for (float& v : t.values) v = normal(random_);
    tensors.push_back(std::move(t));
  }
  void norm(const std::string& name, int d, bool rms = false) {
    std::uniform_real_distribution<float> around_one(0.8f, 1.2f);
    NamedTensor gamma{name + ".gamma",
                      dtype_ == "int8" ? "float32" : dtype_,
                      {d},
                      std::vector<float>(static_cast<std::size_t>(d))};
    for (float& v : gamma.values) v = around_one(random_);
    tensors.push_back(std::move(gamma));
    if (!rms) random(name + ".beta", {d}, 0.1f);
  }
  void linear(const std::string& name, int out, int in, bool bias) {
    random(name + ".weight", {out, in}, 1.0f / std::sqrt(static_cast<float>(in)));
    if (dtype_ == "int8") quantize_last(out, in);
    if (bias) random(name + ".bias", {out}, 0.1f);
  }

  std::vector<NamedTensor> tensors;

 private:
  // The last tensor [rows, cols] becomes int8 with a float32 `_scale` [rows] beside it.
  void quantize_last(int rows, int cols) {
    NamedTensor& weight = tensors.back();
    const auto quantized = kernels::Int8Weights::quantize(weight.values.data(), rows, cols);
    weight.dtype = "int8";
    const std::vector<std::int8_t> values = quantized->unpacked_values();
    std::copy(values.begin(), values.end(), weight.values.begin());
    NamedTensor scale{weight.name + "_scale",
                      "float32",
                      {rows},
                      {quantized->scales(), quantized->scales() + rows}};
    tensors.push_back(std::move(scale));
  }

  std::mt19937 random_;
  std::string dtype_;
};

void attention_tensors(TensorFactory& f, const std::string& prefix, const ModelConfig& config,
                       int k, bool self) {
  const ArchitectureConfig& a = config.architecture;
  f.norm(prefix + "norm", a.d_model, a.norm == NormType::kRmsNorm);
  for (const char* part : {"query", "key", "value"}) {
    f.linear(prefix + part, a.attention_dim(), a.d_model, a.qkv_bias);
  }
  f.linear(prefix + "output", a.d_model, a.attention_dim(), a.qkv_bias);
  if (!self) return;
  if (config.position.type == PositionType::kRelative && k > 0) {
    f.random(prefix + "relative_keys", {2 * k + 1, a.head_dim()}, 0.5f);
    if (config.position.separate_relative_values) {
      f.random(prefix + "relative_values", {2 * k + 1, a.head_dim()}, 0.5f);
    }
  }
  if (config.position.type == PositionType::kT5Bucket) {
    f.random(prefix + "relative_bias", {config.position.buckets, a.heads}, 0.5f);
  }
}

void ffn_tensors(TensorFactory& f, const std::string& prefix, const ArchitectureConfig& a) {
  f.norm(prefix + "norm", a.d_model, a.norm == NormType::kRmsNorm);
  if (a.gated_ffn) f.linear(prefix + "gate", a.d_ff, a.d_model, a.ffn_bias);
  f.linear(prefix + "inner", a.d_ff, a.d_model, a.ffn_bias);
  f.linear(prefix + "outer", a.d_model, a.d_ff, a.ffn_bias);
}

const char* activation_name(Activation a) {
  switch (a) {
    case Activation::kRelu:
      return "relu";
    case Activation::kGelu:
      return "gelu";
    case Activation::kGeluTanh:
      return "gelu_tanh";
    case Activation::kSilu:
      break;
  }
  return "silu";
}

}  // namespace

std::string write_synthetic_model(const std::string& directory,
                                  const SyntheticModelOptions& options) {
  std::filesystem::create_directories(directory);
  const ModelConfig& config = options.config;
  const ArchitectureConfig& a = config.architecture;
  const PositionConfig& p = config.position;

  std::vector<std::string> vocabulary = {"<unk>", "<blank>", "<s>", "</s>"};
  for (int i = static_cast<int>(vocabulary.size()); i < options.vocabulary_size; ++i) {
    vocabulary.push_back(std::to_string(i).insert(0, 1, 'w'));
  }
  for (const char* side : {"source_vocab.txt", "target_vocab.txt"}) {
    std::ofstream out(std::filesystem::path(directory) / side);
    for (const std::string& token : vocabulary) out << token << "\n";
  }

  TensorFactory f(options.seed, options.dtype);
  const int v = options.vocabulary_size;
  f.random("encoder.embeddings", {v, a.d_model}, 1.0f);
  f.random("decoder.embeddings", {v, a.d_model}, 1.0f);
  for (int i = 0; i < a.encoder_layers; ++i) {
    const std::string prefix = "encoder.layer_" + std::to_string(i) + ".";
    attention_tensors(f, prefix + "self_attention.", config, p.encoder_max_relative_position, true);
    ffn_tensors(f, prefix + "ffn.", a);
  }
  for (int i = 0; i < a.decoder_layers; ++i) {
    const std::string prefix = "decoder.layer_" + std::to_string(i) + ".";
    attention_tensors(f, prefix + "self_attention.", config, p.decoder_max_relative_position, true);
    attention_tensors(f, prefix + "cross_attention.", config, 0, false);
    ffn_tensors(f, prefix + "ffn.", a);
  }
  if (a.norm_placement == NormPlacement::kPre) {
    f.norm("encoder.norm", a.d_model, a.norm == NormType::kRmsNorm);
    f.norm("decoder.norm", a.d_model, a.norm == NormType::kRmsNorm);
  }
  f.linear("generator", v, a.d_model, true);
  write_weights((std::filesystem::path(directory) / "model.bin").string(), f.tensors);

  nlohmann::json json = {
      {"format", "rpt-model"},
      {"format_version", 1},
      {"name", "synthetic"},
      {"architecture",
       {{"encoder_layers", a.encoder_layers},
        {"decoder_layers", a.decoder_layers},
        {"d_model", a.d_model},
        {"heads", a.heads},
        {"d_ff", a.d_ff},
        {"scale_attention", a.scale_attention},
        {"activation", activation_name(a.activation)},
        {"norm_placement", a.norm_placement == NormPlacement::kPre ? "pre" : "post"},
        {"norm_eps", a.norm_eps},
        {"norm", a.norm == NormType::kRmsNorm ? "rms_norm" : "layer_norm"},
        {"feed_forward", a.gated_ffn ? "gated" : "dense"},
        {"embedding_scale", a.embedding_scale},
        {"qkv_bias", a.qkv_bias},
        {"ffn_bias", a.ffn_bias}}},
      {"position",
       {{"type", position_type_name(p.type)},
        {"encoder_max_relative_position", p.encoder_max_relative_position},
        {"decoder_max_relative_position", p.decoder_max_relative_position},
        {"relative_tables", p.separate_relative_values ? "separate" : "shared"},
        {"buckets", p.buckets},
        {"max_distance", p.max_distance},
        {"sinusoidal", p.sinusoidal}}}};
  if (a.head_size > 0) json["architecture"]["head_dim"] = a.head_size;
  json["append_source_eos"] = config.append_source_eos;
  if (!config.source_prefix.empty()) json["source_prefix"] = config.source_prefix;
  for (const LanguagePair& pair : config.language_pairs) {
    json["language_pairs"].push_back(
        {{"source", pair.source}, {"target", pair.target}, {"prefix", pair.prefix}});
  }
  std::ofstream(std::filesystem::path(directory) / "config.json") << json.dump(2);
  return directory;
}

}  // namespace rpt::testing
