// Step-level (in-flight) batched decoding (DESIGN.md §4). Sentences join after being encoded and
// leave as soon as they finish or are cancelled; every decoder step runs all rows of all active
// sentences together, each row at its own position. A sentence's result does not depend on what
// it shares a step with.
//
// Not thread-safe: one loop owns a BatchDecoder (the offline Translator makes one per call, the
// server's scheduler one per model).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/beam_search.h"
#include "engine/decoder.h"
#include "engine/model.h"

namespace rpt {

struct SentenceRequest {
  std::uint64_t id = 0;          // chosen by the caller, unique among active sentences
  std::vector<int> source_ids;   // non-empty
  DecodingOptions options;
};

struct FinishedSentence {
  std::uint64_t id = 0;
  std::vector<Hypothesis> hypotheses;  // best first
};

class BatchDecoder {
 public:
  explicit BatchDecoder(std::shared_ptr<const Model> model);

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

 private:
  struct ActiveSentence {
    std::uint64_t id = 0;
    BeamSearch search;
    Tensor memory;  // [source_length, decoder_layers * 2 * d_model], a slice of its batch
    int memory_length = 0;
    std::vector<int> parents;  // rows of the current state this sentence continues (-1: new)
  };

  std::shared_ptr<const Model> model_;
  DecoderState state_;
  std::vector<ActiveSentence> sentences_;
};

}  // namespace rpt
