// Test support: writes model.bin files (docs/model-format.md) and whole synthetic model
// directories with random weights, for tests that need shapes or options no committed
// checkpoint has (post-norm, separate relative tables, corrupt files).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/model_config.h"
#include "engine/tensor.h"

namespace rpt::testing {

struct NamedTensor {
  std::string name;
  std::string dtype = "float32";  // float32, float16 (converted from `values`) or int8 (`values`
                                  // hold the integers)
  Shape shape;
  std::vector<float> values;
};

// Writes tensors with the given format `version`; returns the file's bytes too.
std::vector<unsigned char> write_weights(const std::string& path,
                                         const std::vector<NamedTensor>& tensors,
                                         std::uint32_t version = 1);

struct SyntheticModelOptions {
  // Architecture and position settings to use; append_source_eos, source_prefix and
  // language_pairs (written when not empty) too.
  ModelConfig config;
  int vocabulary_size = 40;  // shared by both sides; tokens are "w0".."wN" plus specials
  std::uint32_t seed = 7;
  // float32 or float16 for every tensor; int8: linear weights quantized per row (with their
  // `_scale` tensors, as `convert_onmt.py --dtype int8` writes them), the rest float32.
  std::string dtype = "float32";
};

// A small model directory with random weights and whitespace tokenisation; returns its path. Its
// tensors are those for_each_weight lists for the config (engine/weight_tensors.h), the optional
// generator bias included.
std::string write_synthetic_model(const std::string& directory,
                                  const SyntheticModelOptions& options);

// Options of a synthetic model with Shaw relative positions (max distance k on both sides).
SyntheticModelOptions relative_model_options(const ArchitectureConfig& architecture, int k);

// A fresh temporary directory under the system temp dir.
std::string make_temp_directory(const std::string& prefix);

}  // namespace rpt::testing
