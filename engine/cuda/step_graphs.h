// The decoder step's CUDA graphs (kernels/cuda/cuda_graph.h), one per shape of step: the key is
// what a captured step bakes in (row count, candidates per row, cache capacity, the addresses of
// its buffers); what else varies the kernels read from the step's input buffer. A key's first
// step runs eagerly, its second is captured, later ones replay (why: docs/ARCHITECTURE.md
// "Design notes"). Not thread-safe: one per CudaBackend, used from its decoding thread.
#pragma once

#include <compare>
#include <functional>
#include <map>
#include <string>

#include "engine/decoder_backend.h"
#include "kernels/cuda/cuda_graph.h"

namespace rpt {

// The rows a step of `rows` runs with graphs: rounded up to one of a few sizes (powers of two
// to 8, then multiples of 8 to 64, of 32 to 256, of 64 beyond), so that a batch whose rows fall
// as its sentences end reuses a handful of graphs. The extra rows compute a dummy sentence start;
// each real row's arithmetic does not depend on them (row-invariant GEMMs, per-row kernels).
int graph_rows(int rows);

struct StepGraphKey {
  int rows = 0;
  int width = 0;
  int capacity = 0;
  const void* cache = nullptr;  // read: the previous step's cache
  const void* spare = nullptr;  // written: this step's cache
  const void* workspace = nullptr;
  const void* inputs = nullptr;
  // Every argument of a step's launches follows from these and the backend's fixed state
  // (weights, model shape, precision): a buffer freed and another allocated at its address is
  // the same key only if the step would issue exactly the same launches.
  auto operator<=>(const StepGraphKey&) const = default;
};

class StepGraphs {
 public:
  // At most `capacity` graphs are kept; the least recently used goes first.
  explicit StepGraphs(std::size_t capacity = 64) : capacity_(capacity) {}

  // Runs `work` (the step's kernels, issued on `stream`) for `key`: replays its graph, captures
  // one, or runs it eagerly, as above. When CUDA refuses a capture, graphs are given up for this
  // backend and every step runs eagerly (the refusal is in last_failure()).
  void run(const StepGraphKey& key, kernels::CudaStream stream, const std::function<void()>& work);

  const StepGraphCounts& counts() const { return counts_; }
  std::size_t size() const { return graphs_.size(); }
  const std::string& last_failure() const { return last_failure_; }

 private:
  struct Entry {
    kernels::CudaGraph graph;  // empty until the key's second step
    std::uint64_t last_used = 0;
  };
  void evict_least_recent();

  std::size_t capacity_;
  std::map<StepGraphKey, Entry> graphs_;
  std::uint64_t clock_ = 0;
  bool refused_ = false;
  std::string last_failure_;
  StepGraphCounts counts_;
};

}  // namespace rpt
