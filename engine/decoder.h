// Incremental decoding on the CPU. A DecoderState holds the self-attention KV cache of a set of
// rows; every row carries its own step, so rows of different sentences, started at different
// times, decode together (step-level batching). Each row's cache lives in a slot (CacheSlots):
// beam reordering copies only forked prefixes. Not thread-safe: one state per decoding loop.
// After a step throws (the memory limit, say) the state is not usable: make a new one.
#pragma once

#include <vector>

#include "engine/attention.h"
#include "engine/cache_slots.h"
#include "engine/model.h"
#include "engine/tensor.h"
#include "kernels/memory_budget.h"

namespace rpt {

class DecoderState {
 public:
  // The cache's bytes are charged to `budget` (if any) as it grows: a step that would pass the
  // budget's limit throws ResourceExhausted.
  explicit DecoderState(const Model& model, kernels::MemoryBudget* budget = nullptr);

  int rows() const { return slots_.rows(); }

  // Rearranges rows for the next step: new row i continues old row parents[i] (a beam's
  // parent) with the first lengths[i] cached positions, or starts empty when parents[i] < 0.
  void reorder(const std::vector<int>& parents, const std::vector<int>& lengths);
  // Makes room for positions [0, positions[r]] in row r's cache: each row grows with its own
  // length, not with the longest row's (one run-away sentence at 250 steps used to grow all 128
  // rows of a batch to 250 positions: 3x the peak memory of the en-de test split at batch 32).
  void reserve_positions(const std::vector<int>& positions);

  std::vector<LayerCache>& layers() { return layers_; }
  // The cache slot of every row: [rows].
  const std::vector<int>& row_slots() const { return slots_.row_slots(); }

 private:
  // Sizes slot `slot` of every layer to hold `positions` positions, in whole chunks of 16;
  // its contents are kept only when `keep_contents` (a reorder's destination is overwritten).
  void reserve_slot(int slot, int positions, bool keep_contents);

  int d_model_;
  CacheSlots slots_;
  std::vector<LayerCache> layers_;
  kernels::MemoryCharge charge_;
};

struct DecoderStepInput {
  std::vector<int> tokens;     // [rows]: the previous token of each row
  std::vector<int> positions;  // [rows]: the step of each row (0 for the start token)
  std::vector<MemoryGroup> memory;  // row groups and their sentence's encoder memory
  // memory[g].keys_values points at layer 0; layer l adds l * 2 * d_model.
};

// Runs one step for every row and returns the output logits [rows, target_vocab].
Tensor decoder_step(const Model& model, const DecoderStepInput& input, DecoderState& state);

}  // namespace rpt
