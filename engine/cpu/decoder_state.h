// Incremental decoding on the CPU. A DecoderState holds the self-attention keys and values of a
// set of rows; every row carries its own step, so rows of different sentences, started at
// different times, decode together (step-level batching). The positions live in a PositionTree:
// beams share their prefixes and beam reordering copies nothing. Not thread-safe: one state per
// decoding loop. After a step throws (the memory limit, say) the state is not usable: make a
// new one.
#pragma once

#include <vector>

#include "engine/cpu/attention.h"
#include "engine/model.h"
#include "engine/cpu/position_tree.h"
#include "engine/tensor.h"
#include "kernels/memory_budget.h"

namespace rpt {

class DecoderState {
 public:
  // The cache's bytes are charged to `budget` (if any) as it grows: a step that would pass the
  // budget's limit throws ResourceExhausted.
  explicit DecoderState(const Model& model, kernels::MemoryBudget* budget = nullptr);

  int rows() const { return static_cast<int>(last_.size()); }

  // Rearranges rows for the next step: new row i continues old row parents[i] (a beam's
  // parent) with the first lengths[i] cached positions, or starts empty when parents[i] < 0.
  void reorder(const std::vector<int>& parents, const std::vector<int>& lengths);
  // Adds position positions[r] to row r (which holds exactly positions 0..positions[r] - 1) and
  // returns every row's history for this step, the new positions' keys and values still to be
  // written. Allocates before it changes anything: a step past the memory limit throws with the
  // state as it was.
  const StepHistory& append_positions(const std::vector<int>& positions);

  // Cached positions held now (shared prefixes counted once).
  int cached_positions() const { return tree_.live(); }

 private:
  int layers_;
  PositionTree tree_;
  std::vector<int> last_;  // [rows]: each row's last cached position (tree node), -1 when none
  StepHistory history_;
};

struct DecoderStepInput {
  std::vector<int> tokens;          // [rows]: the previous token of each row
  std::vector<int> positions;       // [rows]: the step of each row (0 for the start token)
  std::vector<MemoryGroup> memory;  // row groups and their sentence's encoder memory
  // memory[g].keys_values points at layer 0; layer l adds l * 2 A (A: attention_dim).
};

// Runs one step for every row and returns the output logits [rows, target_vocab].
Tensor decoder_step(const Model& model, const DecoderStepInput& input, DecoderState& state);

}  // namespace rpt
