#include "engine/cpu/encoder.h"

#include "engine/cpu/transformer_ops.h"
#include "engine/scratch.h"
#include "engine/transformer.h"

namespace rpt {

EncodedBatch encode(const Model& model, const std::vector<std::vector<int>>& source_ids) {
  check_encoder_input(model, source_ids);
  const ArchitectureConfig& arch = model.config().architecture;
  EncodedBatch encoded;
  encoded.offsets.push_back(0);
  // The packed tokens; positions restart at 0 with each sentence.
  std::vector<int> ids;
  std::vector<int> positions;
  for (const auto& sentence : source_ids) {
    for (std::size_t t = 0; t < sentence.size(); ++t) {
      ids.push_back(sentence[t]);
      positions.push_back(static_cast<int>(t));
    }
    encoded.offsets.push_back(static_cast<int>(ids.size()));
  }
  const int tokens = encoded.tokens();
  encoded.output = Tensor::empty({tokens, arch.d_model});
  encoded.memory_keys_values = Tensor::empty({tokens, model.memory_key_value().out_features()});

  CpuForwardScratch scratch(model, tokens);
  CpuTransformerOps ops(arch, {.offsets = &encoded.offsets});
  encoder_forward(
      ops, model.weights(), model.config(),
      {.ids = ids.data(), .positions = positions.data(), .rows = tokens},
      scratch.buffers(encoded.output.data<float>()),
      {{.first_row = 0, .rows = tokens, .out = encoded.memory_keys_values.data<float>()}});
  return encoded;
}

}  // namespace rpt
