// The encoder stack on the CPU, and the projection of its output into the keys and values every
// decoder layer attends to (computed once per sentence, shared by its beams).
#pragma once

#include <vector>

#include "engine/model.h"
#include "engine/tensor.h"

namespace rpt {

struct EncodedBatch {
  int batch = 0;
  int length = 0;             // padded length
  std::vector<int> lengths;   // [batch]
  Tensor output;              // [batch, length, d_model]: final encoder states
  Tensor memory_keys_values;  // [batch, length, decoder_layers * 2 * d_model]
};

// Encodes sentences of token ids (each non-empty, within the model's max length).
EncodedBatch encode(const Model& model, const std::vector<std::vector<int>>& source_ids);

}  // namespace rpt
