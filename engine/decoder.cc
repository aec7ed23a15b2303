#include "engine/decoder.h"

#include <algorithm>
#include <cmath>

#include "kernels/errors.h"
#include "engine/layers.h"
#include "engine/scratch.h"
#include "kernels/embedding.h"

namespace rpt {

DecoderState::DecoderState(const Model& model, kernels::MemoryBudget* budget)
    : d_model_(model.config().architecture.d_model),
      layers_(model.config().architecture.decoder_layers),
      tree_(2 * layers_ * d_model_, budget) {}

void DecoderState::reorder(const std::vector<int>& parents, const std::vector<int>& lengths) {
  RPT_CHECK(parents.size() == lengths.size(), InvalidArgument, "reorder with ", parents.size(),
            " parents and ", lengths.size(), " lengths");
  std::vector<int> next(parents.size(), -1);
  for (std::size_t r = 0; r < parents.size(); ++r) {
    const int parent = parents[r];
    if (parent < 0) continue;
    RPT_CHECK(parent < rows(), InvalidArgument, "reorder parent ", parent, " out of ", rows());
    int node = last_[static_cast<std::size_t>(parent)];
    RPT_CHECK(lengths[r] >= 0 && lengths[r] <= tree_.depth(node), InvalidArgument, "row ", r,
              " continues ", lengths[r], " positions of a row that has ", tree_.depth(node));
    while (tree_.depth(node) > lengths[r]) node = tree_.parent(node);
    next[r] = node;
  }
  // Holds taken before the old ones are given back: a shared prefix never drops to no holder.
  for (const int node : next) {
    if (node >= 0) tree_.hold(node);
  }
  for (const int node : last_) {
    if (node >= 0) tree_.release(node);
  }
  last_ = std::move(next);
}

const StepHistory& DecoderState::append_positions(const std::vector<int>& positions) {
  RPT_CHECK(positions.size() == last_.size(), InvalidArgument, positions.size(),
            " positions for ", last_.size(), " rows");
  for (std::size_t r = 0; r < last_.size(); ++r) {
    RPT_CHECK(positions[r] == tree_.depth(last_[r]), InvalidArgument, "row ", r,
              " decodes position ", positions[r], " but holds ", tree_.depth(last_[r]));
  }
  // Everything that can throw first.
  tree_.reserve(static_cast<int>(last_.size()));
  long total = 0;
  for (const int position : positions) total += position + 1;
  history_.positions.resize(static_cast<std::size_t>(total));
  history_.first.resize(last_.size() + 1);

  long end = 0;
  for (std::size_t r = 0; r < last_.size(); ++r) {
    const int node = tree_.add(last_[r]);  // the row's hold moves to its new position
    if (last_[r] >= 0) tree_.release(last_[r]);
    last_[r] = node;
    history_.first[r] = end;
    end += positions[r] + 1;
    // Root to leaf: walk up from the new position, filling from the end.
    long at = end;
    for (int n = node; n >= 0; n = tree_.parent(n)) {
      history_.positions[static_cast<std::size_t>(--at)] = tree_.values(n);
    }
  }
  history_.first[last_.size()] = end;
  return history_;
}

Tensor decoder_step(const Model& model, const DecoderStepInput& input, DecoderState& state) {
  const ArchitectureConfig& arch = model.config().architecture;
  const int d = arch.d_model;
  const int rows = static_cast<int>(input.tokens.size());
  RPT_CHECK(rows == state.rows() && input.positions.size() == input.tokens.size(),
            InvalidArgument, "decoder step with ", rows, " tokens for ", state.rows(), " rows");
  if (rows > 0) {  // each row's position is checked against what it holds by append_positions
    const int highest = *std::max_element(input.positions.begin(), input.positions.end());
    RPT_CHECK(highest + 1 <= model.max_sequence_length(), InvalidArgument, "decoding step ",
              highest + 1, " exceeds the model's maximum length ", model.max_sequence_length());
  }
  const StepHistory& history = state.append_positions(input.positions);
  const StepAttentionPlan plan = plan_step_attention(arch, history, input.memory);

  const int vocab = static_cast<int>(model.decoder_embeddings().dim(0));
  for (int token : input.tokens) {
    RPT_CHECK(token >= 0 && token < vocab, InvalidArgument, "target token id ", token,
              " out of range");
  }
  ScratchFloats x(static_cast<std::size_t>(rows) * d);  // the embedding writes it whole
  kernels::embedding_cpu({.ids = input.tokens.data(),
                          .count = rows,
                          .table = model.decoder_embeddings().data<float>(),
                          .vocab = vocab,
                          .dim = d,
                          .scale = arch.embedding_scale ? std::sqrt(static_cast<float>(d)) : 1.0f,
                          .positions = model.config().position.sinusoidal
                                           ? input.positions.data()
                                           : nullptr,
                          .out = x.data()});

  const bool pre_norm = arch.norm_placement == NormPlacement::kPre;
  const long count = static_cast<long>(rows) * d;
  ScratchFloats normed(x.size());    // written by each layer norm before it is read
  ScratchFloats attended(x.size());  // each sub-layer's output
  for (std::size_t l = 0; l < model.decoder_layers().size(); ++l) {
    const DecoderLayerWeights& layer = model.decoder_layers()[l];
    // Self-attention over the cache.
    const float* input_x = x.data();
    if (pre_norm) {
      layer_norm_forward(x.data(), rows, layer.self_attention.norm, arch.norm_eps,
                         normed.data());
      input_x = normed.data();
    }
    self_attention_step(layer.self_attention, arch, input_x, history, plan, static_cast<int>(l),
                        attended.data());
    add_in_place(x.data(), attended.data(), count);
    if (!pre_norm) {
      layer_norm_forward(x.data(), rows, layer.self_attention.norm, arch.norm_eps, x.data());
    }
    // Cross-attention over each sentence's memory, this layer's slice.
    input_x = x.data();
    if (pre_norm) {
      layer_norm_forward(x.data(), rows, layer.cross_attention.norm, arch.norm_eps,
                         normed.data());
      input_x = normed.data();
    }
    cross_attention_step(layer.cross_attention, arch, input_x, input.memory, plan,
                         static_cast<int>(l), attended.data());
    add_in_place(x.data(), attended.data(), count);
    if (!pre_norm) {
      layer_norm_forward(x.data(), rows, layer.cross_attention.norm, arch.norm_eps, x.data());
    }
    feed_forward_forward(x.data(), rows, layer.ffn, arch);
  }
  if (pre_norm) layer_norm_forward(x.data(), rows, model.decoder_norm(), arch.norm_eps, x.data());

  Tensor logits = Tensor::empty({rows, vocab});
  linear_forward(x.data(), rows, model.generator(), logits.data<float>());
  return logits;
}

}  // namespace rpt
