// The architecture and metadata of a model directory (config.json, docs/model-format.md).
#pragma once

#include <string>
#include <vector>

#include "engine/language_pair.h"

namespace rpt {

inline constexpr int kModelFormatVersion = 1;

enum class Activation { kRelu, kGelu, kGeluTanh, kSilu };
enum class NormType { kLayerNorm, kRmsNorm };  // RMS: T5's, no mean and no beta
enum class NormPlacement { kPre, kPost };
enum class PositionType { kRelative, kT5Bucket, kSinusoidal, kNone };

struct SpecialTokens {
  std::string pad = "<blank>";
  std::string unk = "<unk>";
  std::string bos = "<s>";
  std::string eos = "</s>";
};

struct PositionConfig {
  PositionType type = PositionType::kRelative;
  int encoder_max_relative_position = 0;  // k of the encoder stack (relative)
  int decoder_max_relative_position = 0;  // k of the decoder stack (relative)
  bool separate_relative_values = false;  // false: one table serves keys and values
  int buckets = 0;                        // t5_bucket
  int max_distance = 0;                   // t5_bucket
  bool sinusoidal = false;                // absolute encodings added to the embeddings
};

struct ArchitectureConfig {
  int encoder_layers = 0;
  int decoder_layers = 0;
  int d_model = 0;
  int heads = 0;
  // Width of one head's queries, keys and values; 0: d_model / heads. T5 v1.1 and mT5 set it
  // apart (6 heads of 64 in d_model 512), so attention works in heads * head_dim columns.
  int head_size = 0;
  int d_ff = 0;
  Activation activation = Activation::kRelu;
  NormPlacement norm_placement = NormPlacement::kPre;
  float norm_eps = 1e-6f;
  NormType norm = NormType::kLayerNorm;
  // The feed-forward's inner activations: act(gate x) * (inner x) (T5 v1.1) instead of
  // act(inner x).
  bool gated_ffn = false;
  // Scores divided by sqrt(head_dim) (Vaswani et al.); T5 folded that into its weights and reads
  // them unscaled.
  bool scale_attention = true;
  bool embedding_scale = false;
  bool qkv_bias = false;
  bool ffn_bias = true;
  bool tied_generator = false;
  bool shared_embeddings = false;

  int head_dim() const { return head_size > 0 ? head_size : d_model / heads; }
  // Columns of the attention projections' outputs: queries, keys, values and the context.
  int attention_dim() const { return heads * head_dim(); }
};

struct ModelConfig {
  std::string name;
  // The default direction: language_pairs' first (given, they must agree with it).
  std::string source_language;
  std::string target_language;
  std::string weights_file = "model.bin";
  std::string source_vocabulary = "source_vocab.txt";
  std::string target_vocabulary = "target_vocab.txt";
  std::string source_tokenizer;  // empty: whitespace tokenisation
  std::string target_tokenizer;
  SpecialTokens special_tokens;
  std::string decoder_start_token = "<s>";
  // Every source ends with the eos token, as T5's tokenizer writes it.
  bool append_source_eos = false;
  // What a model reads before the text to pick its task (T5's "translate English to German: ");
  // recorded by the converter, empty for most models. The first pair's prefix; a config with
  // language_pairs gives each pair its own instead.
  std::string source_prefix;
  // Every direction the model translates, never empty: config.json's language_pairs, else the
  // one pair source_language -> target_language with source_prefix.
  std::vector<LanguagePair> language_pairs;
  // The longest segment, in source tokens, the model translates whole: a longer one is cut
  // between words first (engine/text_segments.h, segment_limits), for a model trained on short
  // strings that drops words of longer ones (the demo models: UI strings, 7 tokens at the
  // median). 0 (absent from config.json): no such limit.
  int max_segment_tokens = 0;
  ArchitectureConfig architecture;
  PositionConfig position;

  // Reads and validates `directory`/config.json; throws ModelError naming the file.
  static ModelConfig load(const std::string& directory);
  // Parses config.json text; `origin` names the file in error messages.
  static ModelConfig parse(const std::string& json_text, const std::string& origin);
};

std::string position_type_name(PositionType type);

}  // namespace rpt
