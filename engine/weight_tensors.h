// Every tensor of a model's architecture, in one place: `for_each_weight` walks the members of
// the weights arrangement (engine/transformer_weights.h) in the order of the weights file's
// tensors, and hands its visitor, for each member, the file's tensors that fill it (names and the
// shapes the ModelConfig implies, docs/model-format.md) with that member of every weights struct
// it was given. The loader (engine/model.cc) reads and checks the tensors, the CUDA engine
// (engine/cuda/device_weights.cc) uploads the members, the tests' writer
// (tests/support/weights_writer.cc) writes synthetic model files; the double-precision reference
// (tests/support/reference_transformer.cc) reads the file by names of its own, to stay
// independent. A new tensor is added here, once: the three handle it by its kind (table, norm,
// linear).
#pragma once

#include <string>
#include <cstddef>
#include <type_traits>
#include <utility>
#include <vector>

#include "engine/model_config.h"
#include "engine/tensor.h"
#include "engine/transformer_weights.h"

namespace rpt {

enum class TableKind {
  kEmbeddings,         // [vocabulary, d_model]
  kRelativePositions,  // Shaw: [2k+1, head_dim]
  // T5: the file's [buckets, heads] becomes the member's bias per offset, [heads, 2 * max_offset
  // + 1], float32 on every device (engine/transformer_weights.h).
  kT5Bias,
};

// A table member: its tensor NAME [shape].
struct TableSpec {
  std::string name{};
  Shape shape{};
  TableKind kind = TableKind::kEmbeddings;
  bool bidirectional = false;  // kT5Bias: the encoder's buckets (both directions)
  // Not empty: the member has no tensor of its own but shares this one's (shared_embeddings,
  // shared relative tables), which was visited before it. The visit then hands Shared members.
  std::string shares{};
};

// A layer norm member: NAME.gamma [size] and, but for RMS norm, NAME.beta [size].
struct NormSpec {
  std::string name{};
  int size = 0;
  bool beta = true;
  std::string gamma_name() const { return name + ".gamma"; }
  std::string beta_name() const { return name + ".beta"; }
};

enum class Bias { kNone, kRequired, kIfPresent };

// A linear member, or a part of one: for each NAME of `names`, NAME.weight [part_rows, inputs]
// and NAME.bias [part_rows], stacked by rows in the order given (Q/K/V fused). They fill rows
// [first_row, first_row + names.size() * part_rows) of the member's `rows`: all of them but for
// memory_key_value, which each decoder layer's cross-attention keys and values fill in turn.
struct LinearSpec {
  std::vector<std::string> names{};
  int part_rows = 0;
  int inputs = 0;
  Bias bias = Bias::kNone;
  int first_row = 0;
  int rows = 0;  // 0: names.size() * part_rows
  // The vocabulary projection: its bias float32 on every device (the logits are).
  bool generator = false;
  // Not empty: the weight is this table's (tied_generator), visited before it; the bias is still
  // NAME.bias. The visit then hands Shared members.
  std::string shares_weight{};

  std::string weight_name(std::size_t part) const { return names[part] + ".weight"; }
  std::string bias_name(std::size_t part) const { return names[part] + ".bias"; }
  Shape weight_shape() const { return {part_rows, inputs}; }
  Shape bias_shape() const { return {part_rows}; }
  int member_rows() const { return rows > 0 ? rows : static_cast<int>(names.size()) * part_rows; }
  // Whether this visit fills the member's last rows (and so completes it).
  bool last_part() const {
    return first_row + static_cast<int>(names.size()) * part_rows == member_rows();
  }
};

// A member that shares another member's storage (TableSpec::shares, LinearSpec::shares_weight).
template <class Member, class Source>
struct Shared {
  Member& member;
  Source& source;
};

namespace weights_detail {

template <class Member, class Source>
Shared<Member, Source> shared(Member& member, Source& source) {
  return {member, source};
}

// Sizes the layer vectors of a weights struct being filled; a const one is read as it is.
template <class Weights>
void size_layers(Weights& weights, const ArchitectureConfig& a) {
  if constexpr (!std::is_const_v<Weights>) {
    weights.encoder_layers.resize(static_cast<std::size_t>(a.encoder_layers));
    weights.decoder_layers.resize(static_cast<std::size_t>(a.decoder_layers));
  }
}

template <class Field, class Value>
void set_if_mutable(Field& field, const Value& value) {
  if constexpr (!std::is_const_v<Field>) field = value;
}

inline LinearSpec linear_spec(std::string name, int rows, int inputs, bool bias) {
  return {.names = {std::move(name)},
          .part_rows = rows,
          .inputs = inputs,
          .bias = bias ? Bias::kRequired : Bias::kNone};
}

inline NormSpec norm_spec(std::string name, const ArchitectureConfig& a) {
  return {.name = std::move(name), .size = a.d_model, .beta = a.norm != NormType::kRmsNorm};
}

template <class Visitor, class... Attention>
void visit_self_attention(Visitor& visit, const ModelConfig& config, const std::string& prefix,
                          int k, bool bidirectional, Attention&... attention) {
  const ArchitectureConfig& a = config.architecture;
  const PositionConfig& position = config.position;
  const int attention_dim = a.attention_dim();
  visit(norm_spec(prefix + "norm", a), attention.norm...);
  visit(LinearSpec{.names = {prefix + "query", prefix + "key", prefix + "value"},
                   .part_rows = attention_dim,
                   .inputs = a.d_model,
                   .bias = a.qkv_bias ? Bias::kRequired : Bias::kNone},
        attention.qkv...);
  visit(linear_spec(prefix + "output", a.d_model, attention_dim, a.qkv_bias), attention.output...);
  const bool relative = position.type == PositionType::kRelative && k > 0;
  (set_if_mutable(attention.max_relative_position, relative ? k : 0), ...);
  if (relative) {
    const TableSpec keys{.name = prefix + "relative_keys",
                         .shape = {2 * k + 1, a.head_dim()},
                         .kind = TableKind::kRelativePositions};
    visit(keys, attention.relative_keys...);
    TableSpec values = keys;
    values.name = prefix + "relative_values";
    if (position.separate_relative_values) {
      visit(values, attention.relative_values...);
    } else {
      values.shares = keys.name;
      visit(values, shared(attention.relative_values, attention.relative_keys)...);
    }
  } else if (position.type == PositionType::kT5Bucket) {
    visit(TableSpec{.name = prefix + "relative_bias",
                    .shape = {position.buckets, a.heads},
                    .kind = TableKind::kT5Bias,
                    .bidirectional = bidirectional},
          attention.offset_bias...);
  }
}

template <class Visitor, class... FeedForward>
void visit_feed_forward(Visitor& visit, const ArchitectureConfig& a, const std::string& prefix,
                        FeedForward&... ffn) {
  visit(norm_spec(prefix + "norm", a), ffn.norm...);
  if (a.gated_ffn) visit(linear_spec(prefix + "gate", a.d_ff, a.d_model, a.ffn_bias), ffn.gate...);
  visit(linear_spec(prefix + "inner", a.d_ff, a.d_model, a.ffn_bias), ffn.inner...);
  visit(linear_spec(prefix + "outer", a.d_model, a.d_ff, a.ffn_bias), ffn.outer...);
}

}  // namespace weights_detail

// Visits every member of the arrangement that `config` (with these vocabulary sizes) has, in
// the weights file's order of tensors: `visit(spec, member...)` with a TableSpec, NormSpec or
// LinearSpec and that member of each of `weights` (TransformerWeightsOf<Storage>, of any
// storages, const or not; none for a visitor that wants the names only). A member that shares
// another's storage comes as Shared{member, source}, after its source. Members the config
// lacks (a pre-norm model's final norms in a post-norm one, the gate of a dense FFN, relative
// tables where k = 0) are not visited. A weights struct given non-const has its layer vectors
// sized and each self-attention's max_relative_position set from the config first.
template <class Visitor, class... Weights>
void for_each_weight(const ModelConfig& config, int source_vocabulary, int target_vocabulary,
                     Visitor&& visit, Weights&... weights) {
  using weights_detail::shared;
  const ArchitectureConfig& a = config.architecture;
  const PositionConfig& position = config.position;
  const int d = a.d_model;
  (weights_detail::size_layers(weights, a), ...);

  const TableSpec decoder_embeddings{.name = "decoder.embeddings", .shape = {target_vocabulary, d}};
  TableSpec encoder_embeddings{.name = "encoder.embeddings", .shape = {source_vocabulary, d}};
  if (a.shared_embeddings) {
    visit(decoder_embeddings, weights.decoder_embeddings...);
    encoder_embeddings.shares = decoder_embeddings.name;
    visit(encoder_embeddings, shared(weights.encoder_embeddings, weights.decoder_embeddings)...);
  } else {
    visit(encoder_embeddings, weights.encoder_embeddings...);
    visit(decoder_embeddings, weights.decoder_embeddings...);
  }

  for (int i = 0; i < a.encoder_layers; ++i) {
    [[maybe_unused]] const auto l = static_cast<std::size_t>(i);  // unused without weights
    const std::string prefix = "encoder.layer_" + std::to_string(i) + ".";
    weights_detail::visit_self_attention(
        visit, config, prefix + "self_attention.", position.encoder_max_relative_position,
        /*bidirectional=*/true, weights.encoder_layers[l].self_attention...);
    weights_detail::visit_feed_forward(visit, a, prefix + "ffn.", weights.encoder_layers[l].ffn...);
  }
  const int attention_dim = a.attention_dim();
  for (int i = 0; i < a.decoder_layers; ++i) {
    [[maybe_unused]] const auto l = static_cast<std::size_t>(i);  // unused without weights
    const std::string prefix = "decoder.layer_" + std::to_string(i) + ".";
    weights_detail::visit_self_attention(
        visit, config, prefix + "self_attention.", position.decoder_max_relative_position,
        /*bidirectional=*/false, weights.decoder_layers[l].self_attention...);
    const std::string cross = prefix + "cross_attention.";
    visit(weights_detail::norm_spec(cross + "norm", a),
          weights.decoder_layers[l].cross_attention.norm...);
    visit(weights_detail::linear_spec(cross + "query", attention_dim, d, a.qkv_bias),
          weights.decoder_layers[l].cross_attention.query...);
    // This layer's memory keys and values: rows [2 i A, 2 (i + 1) A) of memory_key_value.
    visit(LinearSpec{.names = {cross + "key", cross + "value"},
                     .part_rows = attention_dim,
                     .inputs = d,
                     .bias = a.qkv_bias ? Bias::kRequired : Bias::kNone,
                     .first_row = 2 * i * attention_dim,
                     .rows = 2 * a.decoder_layers * attention_dim},
          weights.memory_key_value...);
    visit(weights_detail::linear_spec(cross + "output", d, attention_dim, a.qkv_bias),
          weights.decoder_layers[l].cross_attention.output...);
    weights_detail::visit_feed_forward(visit, a, prefix + "ffn.", weights.decoder_layers[l].ffn...);
  }

  if (a.norm_placement == NormPlacement::kPre) {
    visit(weights_detail::norm_spec("encoder.norm", a), weights.encoder_norm...);
    visit(weights_detail::norm_spec("decoder.norm", a), weights.decoder_norm...);
  }
  LinearSpec generator{.names = {"generator"},
                       .part_rows = target_vocabulary,
                       .inputs = d,
                       .bias = Bias::kIfPresent,
                       .generator = true};
  if (a.tied_generator) {
    generator.shares_weight = decoder_embeddings.name;
    visit(generator, shared(weights.generator, weights.decoder_embeddings)...);
  } else {
    visit(generator, weights.generator...);
  }
}

}  // namespace rpt
