// The cost of relative positions: encoder forward and one decoder step (top-k included) of the
// same model size with Shaw relative positions (k = 16), T5 buckets, sinusoidal encodings, and
// none, on the CPU (one thread) and, in a CUDA build with a GPU, on the GPU in float32 and
// float16, with and without CUDA graphs (wall time; each call ends with its device-to-host copy).
// Synthetic weights (the cost does not depend on their values). Run:
//   build/bench/relative_cost_bench --benchmark_min_time=2
//   build/bench/relative_cost_bench --benchmark_filter='device:[1-4]'   (GPU only)
#include <benchmark/benchmark.h>

#include <filesystem>
#include <map>

#include "engine/engine.h"
#include "kernels/parallel.h"
#include "tests/support/weights_writer.h"

namespace rpt {
namespace {

enum Variant { kShaw, kT5, kSinusoidal, kNoPosition };

// cpu_layout: the CPU engine's weight layout (kernels/packed_sgemm.h), else a GPU's.
std::shared_ptr<const Model> model_for(Variant variant, bool cpu_layout) {
  static std::map<std::pair<Variant, bool>, std::shared_ptr<const Model>> cache;
  auto found = cache.find({variant, cpu_layout});
  if (found != cache.end()) return found->second;
  testing::SyntheticModelOptions options;
  options.vocabulary_size = 8000;
  ModelConfig& c = options.config;
  c.architecture = {
      .encoder_layers = 6, .decoder_layers = 3, .d_model = 256, .heads = 4, .d_ff = 1024};
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
  auto model = Model::load(directory, {.cpu_layout = cpu_layout});
  std::filesystem::remove_all(directory);
  cache[{variant, cpu_layout}] = model;
  return model;
}

// 1, 2: the GPU as the engine runs by default (decoder steps replayed as CUDA graphs); 3, 4: the
// same without graphs (every kernel launched as it comes).
enum DeviceArg { kCpu, kCudaFloat32, kCudaFloat16, kCudaFloat32Eager, kCudaFloat16Eager };

bool gpu_available() { return cuda_device_count() > 0; }

// The engine for a benchmark's (position, ..., device) arguments; nullptr: skipped.
std::shared_ptr<const Engine> engine_for(benchmark::State& state) {
  const auto device = static_cast<DeviceArg>(state.range(2));
  if (device != kCpu && !gpu_available()) {
    state.SkipWithError("no CUDA device");
    return nullptr;
  }
  kernels::set_cpu_threads(1);
  static std::map<std::pair<long, long>, std::shared_ptr<const Engine>> cache;
  const auto key = std::make_pair(state.range(0), state.range(2));
  auto found = cache.find(key);
  if (found != cache.end()) return found->second;
  ComputeOptions options;
  if (device != kCpu) {
    options.device = Device::kCuda;
    options.precision = device == kCudaFloat16 || device == kCudaFloat16Eager
                            ? kernels::Precision::kFloat16
                            : kernels::Precision::kFloat32;
    options.gpu_graphs = device == kCudaFloat32 || device == kCudaFloat16;
  }
  auto engine = Engine::create(
      model_for(static_cast<Variant>(state.range(0)), options.device == Device::kCpu), options);
  cache[key] = engine;
  return engine;
}

// Encoder over `batch` sentences of `length` tokens, memory K/V projection included.
void BM_Encoder(benchmark::State& state) {
  const auto engine = engine_for(state);
  if (engine == nullptr) return;
  const auto backend = engine->make_backend();
  const int batch = 32;
  const auto length = static_cast<int>(state.range(1));
  std::vector<std::vector<int>> sources(batch, std::vector<int>(static_cast<std::size_t>(length)));
  for (auto& s : sources) {
    for (int t = 0; t < length; ++t) s[static_cast<std::size_t>(t)] = 4 + (t * 37) % 7000;
  }
  for (auto _ : state) benchmark::DoNotOptimize(backend->encode(sources));
  state.SetItemsProcessed(state.iterations() * batch * length);
}

// One decoder step for 128 rows (32 sentences x beam 4) at position `t`, with the fused
// log-softmax + top-4 scan.
void BM_DecoderStep(benchmark::State& state) {
  const auto engine = engine_for(state);
  if (engine == nullptr) return;
  const auto backend = engine->make_backend();
  const int t = static_cast<int>(state.range(1));
  const int sentences = 32, beam = 4, rows = sentences * beam, source_length = 16;
  const std::vector<EncodedSentence> memory =
      backend->encode(std::vector<std::vector<int>>(sentences, std::vector<int>(source_length, 7)));
  StepInput input;
  for (int s = 0; s < sentences; ++s) {
    input.groups.push_back(
        {.sentence = &memory[static_cast<std::size_t>(s)], .first_row = s * beam, .rows = beam});
  }
  input.tokens.assign(rows, 9);
  input.parents.assign(rows, -1);
  input.blocked_tokens.assign(rows, -1);
  input.width = beam;
  StepCandidates candidates;
  for (int p = 0; p <= t; ++p) {  // every row then holds t + 1 positions
    input.positions.assign(rows, p);
    backend->step(input, candidates);
    for (int r = 0; r < rows; ++r) input.parents[static_cast<std::size_t>(r)] = r;
  }
  // Each measured step continues t positions of its row (dropping the one it added last time).
  for (auto _ : state) backend->step(input, candidates);
  state.SetItemsProcessed(state.iterations() * rows);
}

void variants(benchmark::internal::Benchmark* bench, std::initializer_list<long> sizes) {
  bench->ArgNames({"position", "length", "device"});
  for (long device : {kCpu, kCudaFloat32, kCudaFloat16, kCudaFloat32Eager, kCudaFloat16Eager}) {
    for (long v : {kShaw, kT5, kSinusoidal, kNoPosition}) {
      for (long size : sizes) bench->Args({v, size, device});
    }
  }
  bench->Unit(benchmark::kMillisecond)->UseRealTime();
}

BENCHMARK(BM_Encoder)->Apply([](auto* b) { variants(b, {16, 64}); });
BENCHMARK(BM_DecoderStep)->Apply([](auto* b) { variants(b, {8, 40}); });

}  // namespace
}  // namespace rpt

BENCHMARK_MAIN();
