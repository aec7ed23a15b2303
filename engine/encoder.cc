#include "engine/encoder.h"

#include <cmath>

#include "engine/attention.h"
#include "kernels/errors.h"
#include "engine/layers.h"
#include "engine/scratch.h"
#include "kernels/embedding.h"

namespace rpt {
namespace {

// Embeds the packed tokens of `source_ids`; positions restart at 0 with each sentence.
void embed(const Model& model, const std::vector<std::vector<int>>& source_ids, int tokens,
           float* out) {
  const ArchitectureConfig& arch = model.config().architecture;
  std::vector<int> ids;
  std::vector<int> positions;
  ids.reserve(static_cast<std::size_t>(tokens));
  positions.reserve(static_cast<std::size_t>(tokens));
  const int vocab = static_cast<int>(model.encoder_embeddings().dim(0));
  for (const auto& sentence : source_ids) {
    for (std::size_t t = 0; t < sentence.size(); ++t) {
      const int id = sentence[t];
      RPT_CHECK(id >= 0 && id < vocab, InvalidArgument, "source token id ", id,
                " out of range [0, ", vocab, ")");
      ids.push_back(id);
      positions.push_back(static_cast<int>(t));
    }
  }
  kernels::embedding_cpu(
      {.ids = ids.data(),
       .count = tokens,
       .table = model.encoder_embeddings().data<float>(),
       .vocab = vocab,
       .dim = arch.d_model,
       .scale = arch.embedding_scale ? std::sqrt(static_cast<float>(arch.d_model)) : 1.0f,
       .positions = model.config().position.sinusoidal ? positions.data() : nullptr,
       .out = out});
}

}  // namespace

EncodedBatch encode(const Model& model, const std::vector<std::vector<int>>& source_ids) {
  const ArchitectureConfig& arch = model.config().architecture;
  const int d = arch.d_model;
  EncodedBatch encoded;
  encoded.offsets.push_back(0);
  for (const auto& sentence : source_ids) {
    RPT_CHECK(!sentence.empty(), InvalidArgument, "cannot encode an empty sentence");
    RPT_CHECK(static_cast<long>(sentence.size()) <= model.max_sequence_length(), InvalidArgument,
              "source of ", sentence.size(), " tokens exceeds the model's maximum of ",
              model.max_sequence_length());
    encoded.offsets.push_back(encoded.offsets.back() + static_cast<int>(sentence.size()));
  }
  const int tokens = encoded.tokens();
  encoded.output = Tensor::empty({tokens, d});
  float* x = encoded.output.data<float>();
  embed(model, source_ids, tokens, x);

  const bool pre_norm = arch.norm_placement == NormPlacement::kPre;
  ScratchFloats normed(static_cast<std::size_t>(tokens) * d);
  ScratchFloats attended(normed.size());
  for (const EncoderLayerWeights& layer : model.encoder_layers()) {
    const float* attention_input = x;
    if (pre_norm) {
      layer_norm_forward(x, tokens, layer.self_attention.norm, arch.norm_eps, normed.data());
      attention_input = normed.data();
    }
    self_attention_forward(layer.self_attention, arch, attention_input, encoded.offsets,
                           attended.data());
    add_in_place(x, attended.data(), static_cast<long>(tokens) * d);
    if (!pre_norm) layer_norm_forward(x, tokens, layer.self_attention.norm, arch.norm_eps, x);
    feed_forward_forward(x, tokens, layer.ffn, arch);
  }
  if (pre_norm) layer_norm_forward(x, tokens, model.encoder_norm(), arch.norm_eps, x);

  const LinearWeights& memory = model.memory_key_value();
  encoded.memory_keys_values = Tensor::empty({tokens, memory.out_features()});
  linear_forward(x, tokens, memory, encoded.memory_keys_values.data<float>());
  return encoded;
}

}  // namespace rpt
