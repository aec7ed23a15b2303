// Multi-head attention on the CPU: relation-aware self-attention over whole sequences (encoder),
// incremental self-attention over a KV cache whose rows may sit at different steps (decoder),
// and cross-attention over encoder memory shared by all beams of a sentence.
//
// The relative terms follow docs/engine.md "Relative self-attention": one GEMM for the key term of
// every row and head, the offset index computed inside the softmax kernel, a bucketed sum of the
// attention row for the value term and one more GEMM. Stateless; thread-safe.
#pragma once

#include <vector>

#include "engine/model.h"

namespace rpt {

// The attention cores (engine/transformer.h): queries, keys and values already projected, the
// context written before the output projection. A = heads * head_dim (attention_dim).

// Encoder self-attention over packed sequences: sequence b is rows offsets[b] .. offsets[b + 1].
void self_attention_forward(const SelfAttentionWeights& weights,
                            const ArchitectureConfig& architecture,
                            const float* qkv,                 // [tokens, 3 A]: query, key, value
                            const std::vector<int>& offsets,  // [sequences + 1]
                            float* context);                  // [tokens, A]

// The self-attention history of a decoder step's rows (engine/cpu/position_tree.h): row r at
// position t has t + 1 cached positions, positions[first[r]] .. positions[first[r] + t], its own
// new one last. Each points at that position's keys and values for every layer,
// [layer][keys | values][A]; the new ones are written by the step.
struct StepHistory {
  std::vector<float*> positions;  // every row's positions, root first, rows one after another
  std::vector<long> first;        // [rows + 1]

  int rows() const { return static_cast<int>(first.size()) - 1; }
  // Row r's positions (its step + 1) and where they start.
  int count(long r) const {
    return static_cast<int>(first[static_cast<std::size_t>(r) + 1] -
                            first[static_cast<std::size_t>(r)]);
  }
  float* const* of(long r) const { return positions.data() + first[static_cast<std::size_t>(r)]; }
};

// Rows [first_row, first_row + rows) attend to one sentence's encoder memory.
struct MemoryGroup {
  // [memory_length, row_stride]: decoder layer l's keys at l * 2 A, its values A on
  const float* keys_values = nullptr;
  int row_stride = 0;
  int memory_length = 0;
  int first_row = 0;
  int rows = 0;
};

// A decoder step's attention work, the same in every layer: each (row, head) pair is one task,
// split over the threads by cost (the positions or source tokens it reads), not by count: rows of
// one step range from a new sentence's first token to a long one's 200th.
struct StepAttentionPlan {
  std::vector<long> self_costs;   // [rows * heads]
  std::vector<int> memory_group;  // [rows]: the group a row attends to, -1 for none
  std::vector<long> cross_costs;  // [rows * heads]
};

StepAttentionPlan plan_step_attention(const ArchitectureConfig& architecture,
                                      const StepHistory& history,
                                      const std::vector<MemoryGroup>& groups);

// One decoder self-attention step of decoder layer `layer`: row r writes its new key and value
// at its last position and attends to all of its positions.
void self_attention_step(const SelfAttentionWeights& weights,
                         const ArchitectureConfig& architecture,
                         const float* qkv,  // [rows, 3 A]: query, key, value
                         const StepHistory& history, const StepAttentionPlan& plan, int layer,
                         float* context);  // [rows, A]

// Decoder layer `layer`'s cross-attention: each row attends to its group's encoder memory.
void cross_attention_step(const ArchitectureConfig& architecture,
                          const float* query,  // [rows, A]
                          const std::vector<MemoryGroup>& groups, const StepAttentionPlan& plan,
                          int layer,
                          float* context);  // [rows, A]

}  // namespace rpt
