#include "engine/encoder.h"

#include <algorithm>
#include <cmath>

#include "engine/attention.h"
#include "kernels/errors.h"
#include "engine/layers.h"
#include "kernels/embedding.h"

namespace rpt {
namespace {

// Embeds a padded [batch, length] id matrix (pad positions get id 0; they are masked later).
void embed(const Model& model, const std::vector<std::vector<int>>& source_ids, int length,
           float* out) {
  const ArchitectureConfig& arch = model.config().architecture;
  const int batch = static_cast<int>(source_ids.size());
  std::vector<int> ids(static_cast<std::size_t>(batch) * length, 0);
  std::vector<int> positions(ids.size());
  const int vocab = static_cast<int>(model.encoder_embeddings().dim(0));
  for (int b = 0; b < batch; ++b) {
    const auto& sentence = source_ids[static_cast<std::size_t>(b)];
    for (int t = 0; t < length; ++t) {
      const std::size_t slot = static_cast<std::size_t>(b) * length + t;
      positions[slot] = t;
      if (t < static_cast<int>(sentence.size())) {
        const int id = sentence[static_cast<std::size_t>(t)];
        RPT_CHECK(id >= 0 && id < vocab, InvalidArgument, "source token id ", id,
                  " out of range [0, ", vocab, ")");
        ids[slot] = id;
      }
    }
  }
  kernels::embedding_cpu({.ids = ids.data(),
                          .count = static_cast<int>(ids.size()),
                          .table = model.encoder_embeddings().data<float>(),
                          .vocab = vocab,
                          .dim = arch.d_model,
                          .scale = arch.embedding_scale ? std::sqrt(static_cast<float>(arch.d_model))
                                                        : 1.0f,
                          .positions = model.config().position.sinusoidal ? positions.data()
                                                                          : nullptr,
                          .out = out});
}

}  // namespace

EncodedBatch encode(const Model& model, const std::vector<std::vector<int>>& source_ids) {
  const ArchitectureConfig& arch = model.config().architecture;
  const int d = arch.d_model;
  EncodedBatch encoded;
  encoded.batch = static_cast<int>(source_ids.size());
  for (const auto& sentence : source_ids) {
    RPT_CHECK(!sentence.empty(), InvalidArgument, "cannot encode an empty sentence");
    encoded.lengths.push_back(static_cast<int>(sentence.size()));
    encoded.length = std::max(encoded.length, static_cast<int>(sentence.size()));
  }
  RPT_CHECK(encoded.length <= model.max_sequence_length(), InvalidArgument, "source of ",
            encoded.length, " tokens exceeds the model's maximum of ",
            model.max_sequence_length());
  const int tokens = encoded.batch * encoded.length;
  encoded.output = Tensor::empty({encoded.batch, encoded.length, d});
  float* x = encoded.output.data<float>();
  embed(model, source_ids, encoded.length, x);

  const bool pre_norm = arch.norm_placement == NormPlacement::kPre;
  std::vector<float> normed(static_cast<std::size_t>(tokens) * d);
  std::vector<float> attended(normed.size());
  for (const EncoderLayerWeights& layer : model.encoder_layers()) {
    const float* attention_input = x;
    if (pre_norm) {
      layer_norm_forward(x, tokens, layer.self_attention.norm, arch.norm_eps, normed.data());
      attention_input = normed.data();
    }
    self_attention_forward(layer.self_attention, arch, attention_input, encoded.batch,
                           encoded.length, encoded.lengths, attended.data());
    add_in_place(x, attended.data(), static_cast<long>(tokens) * d);
    if (!pre_norm) layer_norm_forward(x, tokens, layer.self_attention.norm, arch.norm_eps, x);
    feed_forward_forward(x, tokens, layer.ffn, arch);
  }
  if (pre_norm) layer_norm_forward(x, tokens, model.encoder_norm(), arch.norm_eps, x);

  const LinearWeights& memory = model.memory_key_value();
  encoded.memory_keys_values =
      Tensor::empty({encoded.batch, encoded.length, memory.out_features()});
  linear_forward(x, tokens, memory, encoded.memory_keys_values.data<float>());
  return encoded;
}

}  // namespace rpt
