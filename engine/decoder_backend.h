// Where a BatchDecoder's arithmetic runs. The backend encodes sentences and runs one decoder step
// for a set of rows, ending with the fused log-softmax + top-k; the BatchDecoder keeps the beam
// search bookkeeping on the host. The CPU backend computes in host memory; the CUDA backend keeps
// weights, encoder memory and the KV cache on the GPU and hands back only each row's top-k
// candidates (one small device-to-host copy per step).
//
// Not thread-safe: one backend per decoding loop (Engine::make_backend makes one).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace rpt {

// One sentence's encoder output, projected to every decoder layer's cross-attention keys and
// values, in the backend's memory: [length, decoder_layers * 2 * d_model]. Shared by the
// sentence's beams; `owner` keeps the encoder batch it belongs to alive (it must not outlive the
// backend that made it).
struct EncodedSentence {
  std::shared_ptr<const void> owner;
  const void* keys_values = nullptr;
  int length = 0;
};

// Rows [first_row, first_row + rows) are the beams of `sentence`.
struct StepRowGroup {
  const EncodedSentence* sentence = nullptr;
  int first_row = 0;
  int rows = 0;
};

struct StepInput {
  std::vector<int> tokens;     // [rows]: each row's previous token
  std::vector<int> positions;  // [rows]: each row's step; also its number of cached positions
  // [rows]: the row of the previous step whose cache this row continues; -1: a new sentence.
  std::vector<int> parents;
  // [rows]: a token whose log-prob is forced to the floor (EOS before min_length), or -1.
  std::vector<int> blocked_tokens;
  std::vector<StepRowGroup> groups;
  int width = 1;  // candidates wanted per row
  // The most positions any row's search can decode (its max_length): how far a cache sized for
  // this batch needs to grow. 0: the model's limit.
  int max_positions = 0;
};

struct StepCandidates {
  std::vector<float> log_probs;  // [rows, width], best first
  std::vector<int> ids;          // [rows, width]
};

// How a backend's decoder steps ran: the CUDA backend replays most as CUDA graphs
// (engine/cuda/step_graphs.h); the CPU runs every step as it comes and counts none.
struct StepGraphCounts {
  std::uint64_t eager = 0;     // steps run without a graph
  std::uint64_t captured = 0;  // graphs captured
  std::uint64_t replayed = 0;  // steps run as a graph (each captured one included)
};

// Where a profiled backend's decoder steps spent their time (ComputeOptions::gpu_profile), by
// part: GPU time of each kind of op (CUDA events between launches), and "step (host wall)", the
// whole of DecoderBackend::step as the host saw it.
struct StepProfilePart {
  double seconds = 0;
  std::uint64_t calls = 0;
};
using StepProfile = std::map<std::string, StepProfilePart>;

class DecoderBackend {
 public:
  virtual ~DecoderBackend() = default;

  // Encodes sentences of ids (each non-empty, ids checked) as one batch.
  virtual std::vector<EncodedSentence> encode(const std::vector<std::vector<int>>& sources) = 0;
  // Runs one decoder step for every row of `input`; fills `out`.
  virtual void step(const StepInput& input, StepCandidates& out) = 0;
  // Memory this backend holds now for decoding (cache, workspace, encoder memory).
  virtual std::size_t device_memory_bytes() const { return 0; }
  virtual StepGraphCounts graph_counts() const { return {}; }
  // Empty unless the engine profiles its steps.
  virtual StepProfile step_profile() const { return {}; }
};

}  // namespace rpt
