#include "engine/cpu/decoder_state.h"

#include "engine/cpu/transformer_ops.h"
#include "engine/scratch.h"
#include "engine/transformer.h"
#include "kernels/errors.h"

namespace rpt {

DecoderState::DecoderState(const Model& model, kernels::MemoryBudget* budget)
    : layers_(model.config().architecture.decoder_layers),
      tree_(2 * layers_ * model.config().architecture.attention_dim(), budget) {}

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
  RPT_CHECK(positions.size() == last_.size(), InvalidArgument, positions.size(), " positions for ",
            last_.size(), " rows");
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
  const int rows = static_cast<int>(input.tokens.size());
  check_decoder_step_input(model, input.tokens, input.positions);
  RPT_CHECK(rows == state.rows(), InvalidArgument, "decoder step with ", rows, " tokens for ",
            state.rows(), " rows");
  // Each row's position is checked against what it holds by append_positions.
  const StepHistory& history = state.append_positions(input.positions);
  const StepAttentionPlan plan = plan_step_attention(arch, history, input.memory);

  ScratchFloats x(static_cast<std::size_t>(rows) * arch.d_model);  // the embedding writes it whole
  CpuForwardScratch scratch(model, rows);
  Tensor logits = Tensor::empty({rows, static_cast<int>(model.generator().out_features())});
  CpuTransformerOps ops(arch, {.history = &history, .plan = &plan, .memory = &input.memory});
  decoder_step_forward(
      ops, model.weights(), model.config(),
      {.ids = input.tokens.data(), .positions = input.positions.data(), .rows = rows},
      scratch.buffers(x.data()), logits.data<float>());
  return logits;
}

}  // namespace rpt
