// What a decoder step costs the host besides the device's arithmetic: BatchDecoder's row layout
// and beam search over every sentence, with a backend that computes nothing (each row's
// candidates are made up, EOS first after a sentence's length). On a GPU the host runs this
// between two steps while the device waits, so it bounds how short a step can get. Run:
//   build/bench/host_step_bench
#include <benchmark/benchmark.h>

#include <algorithm>
#include <filesystem>

#include "engine/batch_decoder.h"
#include "engine/engine.h"
#include "tests/support/weights_writer.h"

namespace rpt {
namespace {

constexpr int kVocabulary = 8000;

// Row r's candidates: `width` tokens, best first; EOS leads once the row has generated
// `length_of(group)` tokens, so sentences end at different steps as in a real batch.
class NullBackend final : public DecoderBackend {
 public:
  explicit NullBackend(int eos) : eos_(eos) {}

  std::vector<EncodedSentence> encode(const std::vector<std::vector<int>>& sources) override {
    std::vector<EncodedSentence> sentences;
    for (const auto& source : sources) {
      sentences.push_back(
          {.owner = nullptr, .keys_values = nullptr, .length = static_cast<int>(source.size())});
    }
    return sentences;
  }

  void step(const StepInput& input, StepCandidates& out) override {
    const int rows = static_cast<int>(input.tokens.size());
    out.log_probs.resize(static_cast<std::size_t>(rows) * input.width);
    out.ids.resize(out.log_probs.size());
    for (const StepRowGroup& group : input.groups) {
      for (int r = group.first_row; r < group.first_row + group.rows; ++r) {
        const bool ends = input.positions[static_cast<std::size_t>(r)] >= group.sentence->length;
        for (int i = 0; i < input.width; ++i) {
          const auto at = static_cast<std::size_t>(r * input.width + i);
          out.ids[at] = ends && i == 0 ? eos_ : 5 + (r * 7 + i * 13) % (kVocabulary - 5);
          out.log_probs[at] = -0.1f * static_cast<float>(i + 1) - 0.01f * static_cast<float>(r % 4);
        }
      }
    }
  }

 private:
  int eos_;
};

class NullEngine final : public Engine {
 public:
  explicit NullEngine(std::shared_ptr<const Model> model) : Engine(std::move(model), {}) {}
  std::unique_ptr<DecoderBackend> make_backend() const override {
    return std::make_unique<NullBackend>(model().eos_id());
  }
  std::string device_description() const override { return "none"; }
};

std::shared_ptr<const Model> small_model() {
  testing::SyntheticModelOptions options;
  options.vocabulary_size = kVocabulary;
  options.config.architecture = {
      .encoder_layers = 1, .decoder_layers = 1, .d_model = 16, .heads = 2, .d_ff = 16};
  const std::string directory = testing::make_temp_directory("rpt-host-bench");
  testing::write_synthetic_model(directory, options);
  auto model = Model::load(directory);
  std::filesystem::remove_all(directory);
  return model;
}

// Steps of `batch` sentences at beam 4 whose lengths run from 6 to 35 tokens (a source's length is
// the target's), sentences joining as others end, as in rpt-translate; per step.
void BM_HostStep(benchmark::State& state) {
  static const auto engine = std::make_shared<NullEngine>(small_model());
  const auto batch = static_cast<int>(state.range(0));
  long steps = 0;
  for (auto _ : state) {
    BatchDecoder decoder(engine);
    std::uint64_t next = 0;
    const std::uint64_t total = 4 * static_cast<std::uint64_t>(batch);
    while (next < total || !decoder.empty()) {
      std::vector<SentenceRequest> joining;
      while (next < total &&
             decoder.active_sentences() + static_cast<int>(joining.size()) < batch) {
        const auto length = static_cast<std::size_t>(6 + (next * 7) % 30);
        joining.push_back({.id = next++,
                           .source_ids = std::vector<int>(length, 9),
                           .options = {},
                           .constraints = nullptr});
      }
      decoder.add(joining);
      benchmark::DoNotOptimize(decoder.step());
      ++steps;
    }
  }
  // items_per_second: steps per second (a step's host time is its inverse).
  state.SetItemsProcessed(steps);
  state.counters["steps"] =
      static_cast<double>(steps) / static_cast<double>(std::max<long>(1, state.iterations()));
}

BENCHMARK(BM_HostStep)->Arg(1)->Arg(32)->Arg(128)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace rpt

BENCHMARK_MAIN();
