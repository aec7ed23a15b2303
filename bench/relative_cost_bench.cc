// The cost of relative positions on the CPU: encoder forward and one decoder step of the same
// model size with Shaw relative positions (k = 16), T5 buckets, sinusoidal encodings, and none.
// Synthetic weights (the cost does not depend on their values). Run:
//   build/bench/relative_cost_bench --benchmark_min_time=2
#include <benchmark/benchmark.h>

#include <filesystem>
#include <map>

#include "engine/decoder.h"
#include "engine/encoder.h"
#include "kernels/gemm.h"
#include "kernels/parallel.h"
#include "tests/support/weights_writer.h"

namespace rpt {
namespace {

enum Variant { kShaw, kT5, kSinusoidal, kNoPosition };

std::shared_ptr<const Model> model_for(Variant variant) {
  static std::map<Variant, std::shared_ptr<const Model>> cache;
  auto found = cache.find(variant);
  if (found != cache.end()) return found->second;
  testing::SyntheticModelOptions options;
  options.vocabulary_size = 8000;
  ModelConfig& c = options.config;
  c.architecture = {.encoder_layers = 6, .decoder_layers = 3, .d_model = 256, .heads = 4, .d_ff = 1024};
  switch (variant) {
    case kShaw:
      c.position.type = PositionType::kRelative;
      c.position.encoder_max_relative_position = 16;
      c.position.decoder_max_relative_position = 16;
      break;
    case kT5:
      c.position.type = PositionType::kT5Bucket;
      c.position.buckets = 32;
      c.position.max_distance = 128;
      break;
    case kSinusoidal:
      c.position.type = PositionType::kSinusoidal;
      c.position.sinusoidal = true;
      break;
    case kNoPosition:
      c.position.type = PositionType::kNone;
      break;
  }
  const std::string directory = testing::make_temp_directory("rpt-bench");
  testing::write_synthetic_model(directory, options);
  auto model = Model::load(directory);
  std::filesystem::remove_all(directory);
  cache[variant] = model;
  return model;
}

// Encoder over `batch` sentences of `length` tokens.
void BM_Encoder(benchmark::State& state) {
  kernels::set_cpu_threads(1);
  const auto model = model_for(static_cast<Variant>(state.range(0)));
  const int batch = 32;
  const auto length = static_cast<int>(state.range(1));
  std::vector<std::vector<int>> sources(batch, std::vector<int>(static_cast<std::size_t>(length)));
  for (auto& s : sources) {
    for (int t = 0; t < length; ++t) s[static_cast<std::size_t>(t)] = 4 + (t * 37) % 7000;
  }
  for (auto _ : state) benchmark::DoNotOptimize(encode(*model, sources));
  state.SetItemsProcessed(state.iterations() * batch * length);
}

// One decoder step for 128 rows (32 sentences x beam 4) at position `t`.
void BM_DecoderStep(benchmark::State& state) {
  kernels::set_cpu_threads(1);
  const auto model = model_for(static_cast<Variant>(state.range(0)));
  const int t = static_cast<int>(state.range(1));
  const int sentences = 32, beam = 4, rows = sentences * beam, source_length = 16;
  const EncodedBatch encoded =
      encode(*model, std::vector<std::vector<int>>(sentences, std::vector<int>(source_length, 7)));
  const int stride = static_cast<int>(encoded.memory_keys_values.dim(2));
  DecoderStepInput input;
  for (int s = 0; s < sentences; ++s) {
    input.memory.push_back({.keys_values = encoded.memory_keys_values.data<float>() +
                                           static_cast<long>(s) * source_length * stride,
                            .row_stride = stride,
                            .memory_length = source_length,
                            .first_row = s * beam,
                            .rows = beam});
  }
  input.tokens.assign(rows, 9);
  input.positions.assign(rows, t);
  DecoderState decoder_state(*model);
  decoder_state.reorder(std::vector<int>(rows, -1), std::vector<int>(rows, 0));
  decoder_state.reserve_steps(t + 1);
  for (auto _ : state) benchmark::DoNotOptimize(decoder_step(*model, input, decoder_state));
  state.SetItemsProcessed(state.iterations() * rows);
}

void variants(benchmark::internal::Benchmark* bench, std::initializer_list<long> sizes) {
  bench->ArgNames({"position", "length"});
  for (long v : {kShaw, kT5, kSinusoidal, kNoPosition}) {
    for (long size : sizes) bench->Args({v, size});
  }
  bench->Unit(benchmark::kMillisecond);
}

BENCHMARK(BM_Encoder)->Apply([](auto* b) { variants(b, {16, 64}); });
BENCHMARK(BM_DecoderStep)->Apply([](auto* b) { variants(b, {8, 40}); });

}  // namespace
}  // namespace rpt

BENCHMARK_MAIN();
