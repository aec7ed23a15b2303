// Test support: a direct, unoptimised evaluation of the model in double precision, written from
// docs/engine.md's equations independently of the engine: explicit relative index matrices, a
// gathered K_rel / V_rel vector per (i, j), full-sequence causal decoding instead of a KV cache,
// weights read by name from the weights file. Slow on purpose; only for small synthetic models.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace rpt::testing {

class ReferenceTransformer {
 public:
  explicit ReferenceTransformer(const std::string& model_directory);
  ~ReferenceTransformer();

  // Final encoder states of one sentence: [length, d_model].
  std::vector<std::vector<double>> encode(const std::vector<int>& source_ids) const;
  // Log-probabilities after each prefix of `target_ids` (which starts with the decoder start
  // token): [target_ids.size(), vocab].
  std::vector<std::vector<double>> decode(const std::vector<int>& source_ids,
                                          const std::vector<int>& target_ids) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rpt::testing
