#include "engine/model_config.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <limits>
#include <sstream>
#include <tuple>
#include <type_traits>

#include "kernels/errors.h"

namespace rpt {
namespace {

using nlohmann::json;

// A config value of the right JSON type but out of range; reported as the file's error.
struct ConfigValueError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Numbers read checked: nlohmann's get<int>() of 1e30 (or get<float>() of 1e300) is a cast out
// of range, undefined behaviour.
template <typename T>
T read(const json& value, const char* key) {
  if constexpr (std::is_same_v<T, int>) {
    if (!value.is_number_integer() || value.get<long long>() < std::numeric_limits<int>::min() ||
        value.get<long long>() > std::numeric_limits<int>::max() ||
        (value.is_number_unsigned() &&
         value.get<unsigned long long>() > std::numeric_limits<int>::max())) {
      throw ConfigValueError(std::string(key) + " must be an integer in the int range");
    }
    return static_cast<int>(value.get<long long>());
  } else if constexpr (std::is_same_v<T, float>) {
    const double number = value.is_number() ? value.get<double>() : std::nan("");
    if (!std::isfinite(number) || std::fabs(number) > std::numeric_limits<float>::max()) {
      throw ConfigValueError(std::string(key) + " must be a finite float32 number");
    }
    return static_cast<float>(number);
  } else {
    return value.get<T>();
  }
}

template <typename T>
T value_or(const json& object, const char* key, T fallback) {
  return object.contains(key) ? read<T>(object.at(key), key) : fallback;
}

template <typename T>
T required(const json& object, const char* key) {
  return read<T>(object.at(key), key);
}

Activation parse_activation(const std::string& name, const std::string& origin) {
  if (name == "relu") return Activation::kRelu;
  if (name == "gelu") return Activation::kGelu;
  if (name == "gelu_tanh") return Activation::kGeluTanh;
  if (name == "silu") return Activation::kSilu;
  RPT_THROW(ModelError, origin, ": unsupported activation '", name,
            "' (relu, gelu, gelu_tanh, silu)");
}

PositionType parse_position_type(const std::string& name, const std::string& origin) {
  if (name == "relative") return PositionType::kRelative;
  if (name == "t5_bucket") return PositionType::kT5Bucket;
  if (name == "sinusoidal") return PositionType::kSinusoidal;
  if (name == "none") return PositionType::kNone;
  RPT_THROW(ModelError, origin, ": unknown position type '", name,
            "' (relative, t5_bucket, sinusoidal, none)");
}

// config.json's language_pairs into config->language_pairs; the top-level languages, where left
// out, name the first pair, and source_prefix is then refused (each pair has its own).
void read_language_pairs(const json& root, const std::string& origin, ModelConfig* config) {
  const json& list = root.at("language_pairs");
  RPT_CHECK(list.is_array(), ModelError, origin,
            ": language_pairs must be a list of {\"source\", \"target\", \"prefix\"}");
  RPT_CHECK(!root.contains("source_prefix"), ModelError, origin,
            ": source_prefix goes without language_pairs; give each pair its \"prefix\"");
  for (const json& each : list) {
    RPT_CHECK(each.is_object(), ModelError, origin,
              ": each of language_pairs must be {\"source\", \"target\", \"prefix\"}");
    for (const auto& [key, value] : each.items()) {
      RPT_CHECK(key == "source" || key == "target" || key == "prefix", ModelError, origin,
                ": language_pairs has an unknown key '", key, "' (source, target, prefix)");
    }
    config->language_pairs.push_back({value_or<std::string>(each, "source", ""),
                                      value_or<std::string>(each, "target", ""),
                                      value_or<std::string>(each, "prefix", "")});
  }
  validate_language_pairs(config->language_pairs, origin);
  const LanguagePair& first = config->language_pairs.front();
  for (auto [key, declared, paired] :
       {std::tuple{"source_language", &config->source_language, &first.source},
        std::tuple{"target_language", &config->target_language, &first.target}}) {
    RPT_CHECK(!root.contains(key) || *declared == *paired, ModelError, origin, ": ", key, " '",
              *declared, "' is not language_pairs[0]'s ('", *paired,
              "'); it names the default pair, or leave it out");
    *declared = *paired;
  }
  config->source_prefix = first.prefix;
}

// Far above any published model (MADLAD-400 10B: 16 heads of 256); keeps the widths' products
// in range.
constexpr long kMaxAttentionDim = 1L << 16;

void validate(const ModelConfig& config, const std::string& origin) {
  const ArchitectureConfig& a = config.architecture;
  RPT_CHECK(a.encoder_layers > 0 && a.decoder_layers > 0, ModelError, origin,
            ": encoder_layers and decoder_layers must be positive");
  RPT_CHECK(a.d_model > 0 && a.heads > 0, ModelError, origin,
            ": d_model and heads must be positive");
  RPT_CHECK(a.head_size >= 0, ModelError, origin, ": head_dim must be positive");
  RPT_CHECK(a.head_size > 0 || a.d_model % a.heads == 0, ModelError, origin, ": d_model (",
            a.d_model, ") must be a multiple of heads (", a.heads,
            ") unless architecture.head_dim is given");
  RPT_CHECK(static_cast<long>(a.heads) * a.head_dim() <= kMaxAttentionDim, ModelError, origin,
            ": heads * head_dim (", static_cast<long>(a.heads) * a.head_dim(), ") exceeds ",
            kMaxAttentionDim);
  RPT_CHECK(a.d_ff > 0, ModelError, origin, ": d_ff must be positive");
  RPT_CHECK(a.norm_eps > 0.0f, ModelError, origin, ": norm_eps must be positive");
  const PositionConfig& p = config.position;
  if (p.type == PositionType::kRelative) {
    RPT_CHECK(p.encoder_max_relative_position >= 0 && p.decoder_max_relative_position >= 0,
              ModelError, origin, ": max relative positions must be >= 0");
  }
  if (p.type == PositionType::kT5Bucket) {
    // The encoder's exact buckets are buckets / 4 per direction (at least one), the decoder's
    // end at buckets / 2: the logarithmic bins need room past both.
    RPT_CHECK(p.buckets >= 4 && p.max_distance > p.buckets / 2, ModelError, origin,
              ": t5_bucket needs buckets >= 4 and max_distance > buckets / 2");
  }
  RPT_CHECK(!p.sinusoidal || a.d_model % 2 == 0, ModelError, origin,
            ": sinusoidal encodings need an even d_model");
}

}  // namespace

std::string position_type_name(PositionType type) {
  switch (type) {
    case PositionType::kRelative:
      return "relative";
    case PositionType::kT5Bucket:
      return "t5_bucket";
    case PositionType::kSinusoidal:
      return "sinusoidal";
    case PositionType::kNone:
      return "none";
  }
  return "unknown";
}

ModelConfig ModelConfig::parse(const std::string& json_text, const std::string& origin) {
  ModelConfig config;
  try {
    const json root = json::parse(json_text);
    RPT_CHECK(value_or<std::string>(root, "format", "") == "rpt-model", ModelError, origin,
              " is not an rpt model config (\"format\" must be \"rpt-model\")");
    const int version = required<int>(root, "format_version");
    RPT_CHECK(version <= kModelFormatVersion, ModelError, origin, " has format_version ", version,
              ", newer than this build supports (", kModelFormatVersion, "); upgrade rpt");
    config.name = value_or<std::string>(root, "name", "");
    config.source_language = value_or<std::string>(root, "source_language", "");
    config.target_language = value_or<std::string>(root, "target_language", "");
    config.weights_file = value_or<std::string>(root, "weights", config.weights_file);
    config.source_vocabulary =
        value_or<std::string>(root, "source_vocabulary", config.source_vocabulary);
    config.target_vocabulary =
        value_or<std::string>(root, "target_vocabulary", config.target_vocabulary);
    config.source_tokenizer = value_or<std::string>(root, "source_tokenizer", "");
    config.target_tokenizer = value_or<std::string>(root, "target_tokenizer", "");
    if (root.contains("special_tokens")) {
      const json& s = root.at("special_tokens");
      config.special_tokens.pad = value_or<std::string>(s, "pad", config.special_tokens.pad);
      config.special_tokens.unk = value_or<std::string>(s, "unk", config.special_tokens.unk);
      config.special_tokens.bos = value_or<std::string>(s, "bos", config.special_tokens.bos);
      config.special_tokens.eos = value_or<std::string>(s, "eos", config.special_tokens.eos);
    }
    config.decoder_start_token =
        value_or<std::string>(root, "decoder_start_token", config.special_tokens.bos);
    config.append_source_eos = value_or<bool>(root, "append_source_eos", false);
    config.source_prefix = value_or<std::string>(root, "source_prefix", "");
    config.max_segment_tokens = value_or<int>(root, "max_segment_tokens", 0);
    RPT_CHECK(!root.contains("max_segment_tokens") || config.max_segment_tokens > 0, ModelError,
              origin, ": max_segment_tokens must be positive");
    if (root.contains("language_pairs")) {
      read_language_pairs(root, origin, &config);
    } else {
      config.language_pairs = {
          {config.source_language, config.target_language, config.source_prefix}};
    }

    const json& a = root.at("architecture");
    ArchitectureConfig& arch = config.architecture;
    arch.encoder_layers = required<int>(a, "encoder_layers");
    arch.decoder_layers = required<int>(a, "decoder_layers");
    arch.d_model = required<int>(a, "d_model");
    arch.heads = required<int>(a, "heads");
    arch.head_size = value_or<int>(a, "head_dim", 0);
    RPT_CHECK(!a.contains("head_dim") || arch.head_size > 0, ModelError, origin,
              ": head_dim must be positive");
    arch.d_ff = required<int>(a, "d_ff");
    arch.activation = parse_activation(value_or<std::string>(a, "activation", "relu"), origin);
    const auto placement = value_or<std::string>(a, "norm_placement", "pre");
    RPT_CHECK(placement == "pre" || placement == "post", ModelError, origin,
              ": norm_placement must be pre or post, not '", placement, "'");
    arch.norm_placement = placement == "pre" ? NormPlacement::kPre : NormPlacement::kPost;
    arch.norm_eps = value_or<float>(a, "norm_eps", arch.norm_eps);
    const auto norm = value_or<std::string>(a, "norm", "layer_norm");
    RPT_CHECK(norm == "layer_norm" || norm == "rms_norm", ModelError, origin,
              ": norm must be layer_norm or rms_norm, not '", norm, "'");
    arch.norm = norm == "rms_norm" ? NormType::kRmsNorm : NormType::kLayerNorm;
    const auto feed_forward = value_or<std::string>(a, "feed_forward", "dense");
    RPT_CHECK(feed_forward == "dense" || feed_forward == "gated", ModelError, origin,
              ": feed_forward must be dense or gated, not '", feed_forward, "'");
    arch.gated_ffn = feed_forward == "gated";
    arch.scale_attention = value_or<bool>(a, "scale_attention", true);
    arch.embedding_scale = value_or<bool>(a, "embedding_scale", false);
    arch.qkv_bias = value_or<bool>(a, "qkv_bias", false);
    arch.ffn_bias = value_or<bool>(a, "ffn_bias", true);
    arch.tied_generator = value_or<bool>(a, "tied_generator", false);
    arch.shared_embeddings = value_or<bool>(a, "shared_embeddings", false);

    const json& p = root.at("position");
    PositionConfig& pos = config.position;
    pos.type = parse_position_type(p.at("type").get<std::string>(), origin);
    pos.encoder_max_relative_position = value_or<int>(p, "encoder_max_relative_position", 0);
    pos.decoder_max_relative_position = value_or<int>(p, "decoder_max_relative_position", 0);
    const auto tables = value_or<std::string>(p, "relative_tables", "shared");
    RPT_CHECK(tables == "shared" || tables == "separate", ModelError, origin,
              ": relative_tables must be shared or separate, not '", tables, "'");
    pos.separate_relative_values = tables == "separate";
    pos.buckets = value_or<int>(p, "buckets", 0);
    pos.max_distance = value_or<int>(p, "max_distance", 0);
    pos.sinusoidal = value_or<bool>(p, "sinusoidal", pos.type == PositionType::kSinusoidal);
  } catch (const json::exception& error) {
    RPT_THROW(ModelError, origin, " is malformed: ", error.what());
  } catch (const ConfigValueError& error) {
    RPT_THROW(ModelError, origin, ": ", error.what());
  }
  validate(config, origin);
  return config;
}

ModelConfig ModelConfig::load(const std::string& directory) {
  const std::string path = (std::filesystem::path(directory) / "config.json").string();
  std::ifstream file(path);
  RPT_CHECK(file.good(), ModelError, "model directory ", directory,
            " has no readable config.json (", path, ")");
  std::ostringstream text;
  text << file.rdbuf();
  return parse(text.str(), path);
}

}  // namespace rpt
