// The encoder stack on the CPU, and the projection of its output into the keys and values every
// decoder layer attends to (computed once per sentence, shared by its beams).
#pragma once

#include <vector>

#include "engine/model.h"
#include "engine/tensor.h"

namespace rpt {

// Sentences packed one after another, without padding: sentence b's tokens are rows
// offsets[b] .. offsets[b + 1] of every tensor.
struct EncodedBatch {
  std::vector<int> offsets;   // [batch + 1]
  Tensor output;              // [tokens, d_model]: final encoder states
  Tensor memory_keys_values;  // [tokens, decoder_layers * 2 A] (A: attention_dim)

  int batch() const { return static_cast<int>(offsets.size()) - 1; }
  int tokens() const { return offsets.back(); }
  int length(int b) const {
    return offsets[static_cast<std::size_t>(b) + 1] - offsets[static_cast<std::size_t>(b)];
  }
};

// Encodes sentences of token ids (each non-empty, within the model's max length). No work is
// spent on padding: every layer but the attention runs over the packed tokens, the attention over
// each sentence's own tokens (why: docs/PERFORMANCE.md "Server vs offline throughput", session 11).
EncodedBatch encode(const Model& model, const std::vector<std::vector<int>>& source_ids);

}  // namespace rpt
