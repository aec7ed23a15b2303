#include "engine/decoder.h"

#include <algorithm>
#include <cmath>

#include "kernels/errors.h"
#include "engine/layers.h"
#include "kernels/embedding.h"
#include "kernels/parallel.h"

namespace rpt {

DecoderState::DecoderState(const Model& model, kernels::MemoryBudget* budget)
    : d_model_(model.config().architecture.d_model),
      layers_(static_cast<std::size_t>(model.config().architecture.decoder_layers)),
      charge_(budget) {}

void DecoderState::reserve_slot(int slot, int positions, bool keep_contents) {
  const auto index = static_cast<std::size_t>(slot);
  const std::size_t needed = static_cast<std::size_t>(positions) * d_model_;
  // Whole chunks of 16 positions, allocated exactly, one chunk at a time past what the row
  // needs: a row's cache is copied once per 16 steps (what a step computes dwarfs it), and a
  // slot holds at most 15 positions more than its row. (Doubling held up to twice that: the KV
  // cache peaked at 90 MiB on the en-de test split at batch 32.)
  const std::size_t chunk = 16 * static_cast<std::size_t>(d_model_);
  const std::size_t wanted = std::max<std::size_t>(1, (needed + chunk - 1) / chunk) * chunk;
  for (LayerCache& layer : layers_) {
    if (layer.keys.size() <= index) {
      layer.keys.resize(index + 1);
      layer.values.resize(index + 1);
    }
    std::vector<float>& keys = layer.keys[index];
    std::vector<float>& values = layer.values[index];
    const std::size_t held = keys.size();
    // A slot that a long row grew and a short one now holds gives the rest back (with beam
    // reordering, one run-away sentence passes through many slots on its way to 250 steps);
    // one that must grow is reallocated exactly (resize alone would double the capacity).
    const bool oversized = held > wanted + chunk;
    if (!oversized && held >= needed) continue;
    // Charged before the allocation (a step past the budget throws with the slot untouched),
    // given back after the old buffers are gone.
    if (wanted > held) charge_.grow_to(charge_.bytes() + 2 * (wanted - held) * sizeof(float));
    const auto kept = static_cast<long>(keep_contents ? std::min(held, wanted) : 0);
    for (std::vector<float>* buffer : {&keys, &values}) {
      std::vector<float> resized;
      resized.reserve(wanted);
      resized.assign(buffer->begin(), buffer->begin() + kept);
      resized.resize(wanted);
      buffer->swap(resized);
    }
    if (wanted < held) charge_.shrink_to(charge_.bytes() - 2 * (held - wanted) * sizeof(float));
  }
}

void DecoderState::reorder(const std::vector<int>& parents, const std::vector<int>& lengths) {
  const std::vector<CacheSlots::Copy> copies = slots_.reorder(parents, lengths);
  for (const CacheSlots::Copy& copy : copies) reserve_slot(copy.to_slot, copy.length, false);
  // Sources are never destinations (CacheSlots), so the copies may run in parallel: one task per
  // copy and layer, split by the floats they move.
  const std::size_t layer_count = layers_.size();
  std::vector<long> costs(copies.size() * layer_count);
  for (std::size_t task = 0; task < costs.size(); ++task) {
    costs[task] = 2L * copies[task / layer_count].length * d_model_;
  }
  constexpr long kMinCopyChunkFloats = 1L << 15;  // 128 KiB: below, a wake-up costs more
  kernels::parallel_for_balanced(costs, kMinCopyChunkFloats, [&](long first, long last) {
    for (long task = first; task < last; ++task) {
      const CacheSlots::Copy& copy = copies[static_cast<std::size_t>(task) / layer_count];
      LayerCache& layer = layers_[static_cast<std::size_t>(task) % layer_count];
      const auto count = static_cast<long>(copy.length) * d_model_;
      const auto from = static_cast<std::size_t>(copy.from_slot);
      const auto to = static_cast<std::size_t>(copy.to_slot);
      std::copy_n(layer.keys[from].begin(), count, layer.keys[to].begin());
      std::copy_n(layer.values[from].begin(), count, layer.values[to].begin());
    }
  });
}

void DecoderState::reserve_positions(const std::vector<int>& positions) {
  const std::vector<int>& slots = slots_.row_slots();
  for (std::size_t r = 0; r < slots.size(); ++r) reserve_slot(slots[r], positions[r] + 1, true);
}

Tensor decoder_step(const Model& model, const DecoderStepInput& input, DecoderState& state) {
  const ArchitectureConfig& arch = model.config().architecture;
  const int d = arch.d_model;
  const int rows = static_cast<int>(input.tokens.size());
  RPT_CHECK(rows == state.rows() && input.positions.size() == input.tokens.size(),
            InvalidArgument, "decoder step with ", rows, " tokens for ", state.rows(), " rows");
  if (rows > 0) {
    const auto [lowest, highest] =
        std::minmax_element(input.positions.begin(), input.positions.end());
    RPT_CHECK(*highest + 1 <= model.max_sequence_length(), InvalidArgument, "decoding step ",
              *highest + 1, " exceeds the model's maximum length ", model.max_sequence_length());
    RPT_CHECK(*lowest >= 0, InvalidArgument, "decoding step at a negative position");
  }
  state.reserve_positions(input.positions);

  const int vocab = static_cast<int>(model.decoder_embeddings().dim(0));
  for (int token : input.tokens) {
    RPT_CHECK(token >= 0 && token < vocab, InvalidArgument, "target token id ", token,
              " out of range");
  }
  std::vector<float> x(static_cast<std::size_t>(rows) * d);
  kernels::embedding_cpu({.ids = input.tokens.data(),
                          .count = rows,
                          .table = model.decoder_embeddings().data<float>(),
                          .vocab = vocab,
                          .dim = d,
                          .scale = arch.embedding_scale ? std::sqrt(static_cast<float>(d)) : 1.0f,
                          .positions = model.config().position.sinusoidal
                                           ? input.positions.data()
                                           : nullptr,
                          .out = x.data()});

  const bool pre_norm = arch.norm_placement == NormPlacement::kPre;
  const long count = static_cast<long>(rows) * d;
  std::vector<float> normed(x.size());
  std::vector<float> attended(x.size());
  std::vector<MemoryGroup> memory = input.memory;
  for (std::size_t l = 0; l < model.decoder_layers().size(); ++l) {
    const DecoderLayerWeights& layer = model.decoder_layers()[l];
    LayerCache& cache = state.layers()[l];
    // Self-attention over the cache.
    const float* input_x = x.data();
    if (pre_norm) {
      layer_norm_forward(x.data(), rows, layer.self_attention.norm, arch.norm_eps,
                         normed.data());
      input_x = normed.data();
    }
    self_attention_step(layer.self_attention, arch, input_x, input.positions, state.row_slots(),
                        cache, attended.data());
    add_in_place(x.data(), attended.data(), count);
    if (!pre_norm) {
      layer_norm_forward(x.data(), rows, layer.self_attention.norm, arch.norm_eps, x.data());
    }
    // Cross-attention over each sentence's memory, this layer's slice.
    input_x = x.data();
    if (pre_norm) {
      layer_norm_forward(x.data(), rows, layer.cross_attention.norm, arch.norm_eps,
                         normed.data());
      input_x = normed.data();
    }
    for (std::size_t g = 0; g < memory.size(); ++g) {
      memory[g].keys_values = input.memory[g].keys_values + static_cast<long>(l) * 2 * d;
    }
    cross_attention_step(layer.cross_attention, arch, input_x, rows, memory, attended.data());
    add_in_place(x.data(), attended.data(), count);
    if (!pre_norm) {
      layer_norm_forward(x.data(), rows, layer.cross_attention.norm, arch.norm_eps, x.data());
    }
    feed_forward_forward(x.data(), rows, layer.ffn, arch);
  }
  if (pre_norm) layer_norm_forward(x.data(), rows, model.decoder_norm(), arch.norm_eps, x.data());

  Tensor logits = Tensor::empty({rows, vocab});
  linear_forward(x.data(), rows, model.generator(), logits.data<float>());
  return logits;
}

}  // namespace rpt
