// Multi-head attention on the CPU: relation-aware self-attention over whole sequences (encoder),
// incremental self-attention over a KV cache whose rows may sit at different steps (decoder),
// and cross-attention over encoder memory shared by all beams of a sentence.
//
// The relative terms follow DESIGN.md §3: one GEMM for the key term of every row and head,
// the offset index computed inside the softmax kernel, a bucketed sum of the attention row for
// the value term and one more GEMM. Stateless; thread-safe.
#pragma once

#include <vector>

#include "engine/model.h"

namespace rpt {

// Encoder self-attention over a padded batch; rows past a sequence's length get zeros.
void self_attention_forward(const SelfAttentionWeights& weights,
                            const ArchitectureConfig& architecture,
                            const float* x,  // [batch, length, d_model], already normalised
                            int batch, int length,
                            const std::vector<int>& lengths,  // [batch]
                            float* out);                      // [batch, length, d_model]

// The self-attention KV cache of one decoder layer, one growable buffer per slot (a row's
// cache): keys[slot] and values[slot] hold [positions, d_model].
struct LayerCache {
  std::vector<std::vector<float>> keys;
  std::vector<std::vector<float>> values;
};

// One decoder self-attention step: row r sits at position positions[r] and keeps its cache in
// slot slots[r] (which holds at least positions[r] + 1 positions); its new key and value are
// written there at that position and it attends to positions 0..positions[r].
void self_attention_step(const SelfAttentionWeights& weights,
                         const ArchitectureConfig& architecture,
                         const float* x,  // [rows, d_model], already normalised
                         const std::vector<int>& positions,  // [rows]
                         const std::vector<int>& slots,      // [rows]
                         LayerCache& cache,
                         float* out);  // [rows, d_model]

// Rows [first_row, first_row + rows) attend to one sentence's encoder memory.
struct MemoryGroup {
  const float* keys_values = nullptr;  // [memory_length, row_stride]; this layer's K then V
  int row_stride = 0;
  int memory_length = 0;
  int first_row = 0;
  int rows = 0;
};

void cross_attention_step(const CrossAttentionWeights& weights,
                          const ArchitectureConfig& architecture,
                          const float* x,  // [rows, d_model], already normalised
                          int rows, const std::vector<MemoryGroup>& groups,
                          float* out);  // [rows, d_model]

}  // namespace rpt
