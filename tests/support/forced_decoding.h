// Test support: runs the engine's encoder and incremental decoder along a given target prefix
// (teacher forcing), to compare encoder states and per-step log-probabilities with a reference.
#pragma once

#include <vector>

#include "engine/model.h"

namespace rpt::testing {

struct ForcedDecoding {
  std::vector<float> encoder_output;               // [source_length, d_model]
  std::vector<std::vector<float>> step_log_probs;  // [prefix length][vocab]
};

// Decodes `batch` sentences together (rows at the same steps); returns one result per sentence.
// `prefixes[i]` starts with the decoder start token.
std::vector<ForcedDecoding> forced_decode(const Model& model,
                                          const std::vector<std::vector<int>>& sources,
                                          const std::vector<std::vector<int>>& prefixes);

}  // namespace rpt::testing
