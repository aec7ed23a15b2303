#include "engine/cpu/cpu_engine.h"

#include <memory>
#include <utility>
#include <vector>

#include "engine/cpu/decoder_state.h"
#include "engine/cpu/encoder.h"
#include "engine/decoder_backend.h"
#include "kernels/memory_budget.h"
#include "kernels/top_k_log_softmax.h"

namespace rpt {
namespace {

// One sentence's encoder keys and values [length, decoder_layers * 2 A], charged while
// any of its beams decodes.
struct ChargedMemory {
  kernels::MemoryCharge charge;
  std::vector<float> keys_values;
};

// The CPU path: encoder and decoder steps in float32 host memory (engine/cpu/encoder.h, decoder.h).
// Encoder memory and KV cache are charged to the backend's budget, a child of the engine's.
class CpuBackend final : public DecoderBackend {
 public:
  CpuBackend(std::shared_ptr<const Model> model, kernels::MemoryBudget* engine_budget)
      : model_(std::move(model)), budget_(0, engine_budget), state_(*model_, &budget_) {}

  // Each sentence gets its own copy of its keys and values, freed when it finishes: a batch's
  // memory held until its last sentence finished lets one run-away sentence keep the others'
  // alive (the measured share of the peak: docs/PERFORMANCE.md "rpt vs CTranslate2 after the
  // position tree and grouped encoding"). Sentences are encoded in
  // groups of at most kEncoderTokens tokens (one longer sentence alone): the encoder's
  // activations (the feed-forward's [tokens, d_ff] above all) are what a process's peak memory
  // is made of, and a sentence encodes the same whatever it is grouped with.
  std::vector<EncodedSentence> encode(const std::vector<std::vector<int>>& sources) override {
    constexpr std::size_t kEncoderTokens = 1024;
    std::vector<EncodedSentence> sentences;
    std::size_t first = 0;
    while (first < sources.size()) {
      std::size_t end = first + 1;
      std::size_t tokens = sources[first].size();
      while (end < sources.size() && tokens + sources[end].size() <= kEncoderTokens) {
        tokens += sources[end++].size();
      }
      encode_group(
          {sources.begin() + static_cast<long>(first), sources.begin() + static_cast<long>(end)},
          tokens, sentences);
      first = end;
    }
    return sentences;
  }

  void step(const StepInput& input, StepCandidates& out) override {
    state_.reorder(input.parents, input.positions);
    const ArchitectureConfig& arch = model_->config().architecture;
    DecoderStepInput step_input{.tokens = input.tokens, .positions = input.positions, .memory = {}};
    for (const StepRowGroup& group : input.groups) {
      step_input.memory.push_back(
          {.keys_values = static_cast<const float*>(group.sentence->keys_values),
           .row_stride = arch.decoder_layers * 2 * arch.attention_dim(),
           .memory_length = group.sentence->length,
           .first_row = group.first_row,
           .rows = group.rows});
    }
    const Tensor logits = decoder_step(*model_, step_input, state_);
    const int rows = static_cast<int>(input.tokens.size());
    out.log_probs.resize(static_cast<std::size_t>(rows) * input.width);
    out.ids.resize(out.log_probs.size());
    kernels::top_k_log_softmax_cpu({.logits = logits.data<float>(),
                                    .rows = rows,
                                    .vocab = static_cast<int>(logits.dim(1)),
                                    .k = input.width,
                                    .blocked_token = input.blocked_tokens.data(),
                                    .log_probs = out.log_probs.data(),
                                    .ids = out.ids.data()});
  }

  std::size_t device_memory_bytes() const override { return budget_.used_bytes(); }

 private:
  void encode_group(const std::vector<std::vector<int>>& sources, std::size_t tokens,
                    std::vector<EncodedSentence>& sentences) {
    // What rpt::encode keeps of the group: final states [tokens, d] and the decoder layers' keys
    // and values [tokens, layers * 2 A].
    const ArchitectureConfig& arch = model_->config().architecture;
    const std::size_t per_token =
        static_cast<std::size_t>(arch.d_model) +
        2 * static_cast<std::size_t>(arch.decoder_layers) * arch.attention_dim();
    const kernels::MemoryCharge batch_charge(&budget_, tokens * per_token * sizeof(float));
    const EncodedBatch batch = rpt::encode(*model_, sources);
    const long stride = batch.memory_keys_values.dim(1);
    const float* memory = batch.memory_keys_values.data<float>();
    for (int i = 0; i < batch.batch(); ++i) {
      const int length = batch.length(i);
      const long count = length * stride;
      auto sentence = std::make_shared<ChargedMemory>();
      sentence->charge =
          kernels::MemoryCharge(&budget_, static_cast<std::size_t>(count) * sizeof(float));
      const float* start = memory + batch.offsets[static_cast<std::size_t>(i)] * stride;
      sentence->keys_values.assign(start, start + count);
      sentences.push_back(
          {.owner = sentence, .keys_values = sentence->keys_values.data(), .length = length});
    }
  }

  std::shared_ptr<const Model> model_;
  kernels::MemoryBudget budget_;  // before state_, which charges it
  DecoderState state_;
};

class CpuEngine final : public Engine {
 public:
  CpuEngine(std::shared_ptr<const Model> model, const ComputeOptions& options)
      : Engine(std::move(model), options), budget_(options.memory_limit_bytes) {}
  std::unique_ptr<DecoderBackend> make_backend() const override {
    return std::make_unique<CpuBackend>(shared_model(), &budget_);
  }
  std::size_t device_memory_bytes() const override { return budget_.used_bytes(); }
  std::size_t peak_device_memory_bytes() const override { return budget_.peak_bytes(); }
  std::string device_description() const override { return "cpu"; }

 private:
  // Every backend's decoding state; backends must not outlive the engine (as on the GPU).
  mutable kernels::MemoryBudget budget_;
};

}  // namespace

std::shared_ptr<const Engine> make_cpu_engine(std::shared_ptr<const Model> model,
                                              const ComputeOptions& options) {
  return std::make_shared<CpuEngine>(std::move(model), options);
}

}  // namespace rpt
