// Step-level (in-flight) batched decoding (docs/engine.md "Step-level (in-flight) batching").
// Sentences join after being encoded and leave as soon as they finish or are cancelled; every
// decoder step runs all rows of all active sentences together, each row at its own position. A
// sentence's result does not depend on what it shares a step with.
//
// Not thread-safe: one loop owns a BatchDecoder (the offline Translator makes one per call, the
// server's scheduler one per model).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/beam_search.h"
#include "engine/decoder_backend.h"
#include "engine/engine.h"

namespace rpt {

// An admission group (TranslatorOptions::admission_group, SchedulerOptions::admission_group):
// the device's measured best (admission_group_for).
inline constexpr int kAdmissionGroupByDevice = 0;

// The admission group to use: `requested`, or for kAdmissionGroupByDevice the device's measured
// best within `max_rows` sentences: 8 on a GPU (an encoder call's fixed cost dominates there), 1
// on the CPU (a CPU step costs what its rows do), as measured in docs/PERFORMANCE.md "Admission
// in groups". Throws InvalidArgument unless the group is in [1, max_rows].
int admission_group_for(Device device, int requested, int max_rows);

// How many of `waiting` sentences join a decoder with `room` free slots now (admission_group
// `group`): all that fit when the decoder is empty, else none until `group` fit or all do.
std::size_t sentences_to_admit(std::size_t room, std::size_t waiting, bool decoder_empty,
                               int group);

struct SentenceRequest {
  std::uint64_t id = 0;         // chosen by the caller, unique among active sentences
  std::vector<int> source_ids;  // non-empty
  DecodingOptions options;
  // What the translation must contain (protected spans); nullptr: nothing.
  std::shared_ptr<const DecodingConstraints> constraints;
};

struct FinishedSentence {
  std::uint64_t id = 0;
  std::vector<Hypothesis> hypotheses;  // best first
};

class BatchDecoder {
 public:
  explicit BatchDecoder(std::shared_ptr<const Engine> engine);
  // With a backend `engine` made earlier (kept from another decoder: release_backend()).
  BatchDecoder(std::shared_ptr<const Engine> engine, std::unique_ptr<DecoderBackend> backend);
  // Sentences' encoder memory belongs to the backend: a member-wise assignment would free the
  // backend first. Use reset() to start over.
  BatchDecoder(const BatchDecoder&) = delete;
  BatchDecoder& operator=(const BatchDecoder&) = delete;

  // Drops every sentence and the backend (after a failed step its state is not trusted), which
  // releases their memory; the next add() starts from a fresh backend.
  void reset();
  // Hands the backend over for another decoder of the same engine; only when no sentence is
  // active (nullptr otherwise, or when there is none). Leaves this decoder as after reset().
  std::unique_ptr<DecoderBackend> release_backend();
  // True until sentences are first added after construction or reset(): the backend holds
  // nothing (no cache kept from finished sentences).
  bool fresh() const { return fresh_; }

  // Encodes `requests` as one encoder batch; they join the next step. Throws InvalidArgument
  // (and adds nothing) on bad options or ids.
  void add(const std::vector<SentenceRequest>& requests);
  // Runs one decoder step for every active sentence; returns those that finished.
  std::vector<FinishedSentence> step();
  // Drops a sentence; its rows are freed before the next step. False if it is not active.
  bool cancel(std::uint64_t id);

  bool empty() const { return sentences_.empty(); }
  int active_sentences() const { return static_cast<int>(sentences_.size()); }
  // Decoder rows the next step will run.
  int active_rows() const;
  // Memory of this decoder's cache, workspace and encoder memory (on the CPU: cache and
  // encoder memory, the bytes charged to the memory budget).
  std::size_t device_memory_bytes() const { return backend_ ? backend_->device_memory_bytes() : 0; }
  // How the backend's steps ran (CUDA graphs replayed, captured, eager); none on the CPU.
  StepGraphCounts graph_counts() const {
    return backend_ ? backend_->graph_counts() : StepGraphCounts{};
  }
  StepProfile step_profile() const { return backend_ ? backend_->step_profile() : StepProfile{}; }

 private:
  struct ActiveSentence {
    std::uint64_t id = 0;
    BeamSearch search;
    EncodedSentence memory;
    std::vector<int> parents;  // rows of the previous step this sentence continues (-1: new)
  };

  const Model& model() const { return engine_->model(); }

  std::shared_ptr<const Engine> engine_;
  std::unique_ptr<DecoderBackend> backend_;
  std::vector<ActiveSentence> sentences_;
  StepInput input_;  // reused between steps
  StepCandidates candidates_;
  bool fresh_ = true;
};

}  // namespace rpt
