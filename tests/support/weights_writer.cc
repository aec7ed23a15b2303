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
#include "engine/weight_tensors.h"
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
  // The tensors of the linear layers NAME of `spec` (the weight but for a tied generator's).
  void linear(const LinearSpec& spec) {
    for (std::size_t part = 0; part < spec.names.size(); ++part) {
      if (spec.shares_weight.empty()) {
        random(spec.weight_name(part), spec.weight_shape(),
               1.0f / std::sqrt(static_cast<float>(spec.inputs)));
        if (dtype_ == "int8") quantize_last(spec.part_rows, spec.inputs);
      }
      if (spec.bias != Bias::kNone) random(spec.bias_name(part), spec.bias_shape(), 0.1f);
    }
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

// The tensors of one member of the weights (for_each_weight's visit); those sharing another's
// have none of their own. Optional ones (the generator's bias) are written.
void write_tensors(TensorFactory& f, const TableSpec& table) {
  if (!table.shares.empty()) return;
  f.random(table.name, table.shape, table.kind == TableKind::kEmbeddings ? 1.0f : 0.5f);
}
void write_tensors(TensorFactory& f, const NormSpec& norm) {
  f.norm(norm.name, norm.size, /*rms=*/!norm.beta);
}
void write_tensors(TensorFactory& f, const LinearSpec& linear) { f.linear(linear); }

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
  for_each_weight(config, v, v, [&f](const auto& spec) { write_tensors(f, spec); });
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
  if (a.tied_generator) json["architecture"]["tied_generator"] = true;
  if (a.shared_embeddings) json["architecture"]["shared_embeddings"] = true;
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
