#include "engine/cuda/step_graphs.h"

#include <algorithm>

#include "kernels/errors.h"

namespace rpt {

int graph_rows(int rows) {
  if (rows <= 0) return rows;
  const auto round_up = [&](int multiple) { return (rows + multiple - 1) / multiple * multiple; };
  if (rows <= 8) {
    int power = 1;
    while (power < rows) power *= 2;
    return power;
  }
  if (rows <= 64) return round_up(8);
  if (rows <= 256) return round_up(32);
  return round_up(64);
}

void StepGraphs::run(const StepGraphKey& key, kernels::CudaStream stream,
                     const std::function<void()>& work) {
  if (refused_ || capacity_ == 0) {
    ++counts_.eager;
    work();
    return;
  }
  auto found = graphs_.find(key);
  if (found == graphs_.end()) {
    if (graphs_.size() >= capacity_) evict_least_recent();
    graphs_.emplace(key, Entry{.graph = {}, .last_used = ++clock_});
    ++counts_.eager;
    work();
    return;
  }
  Entry& entry = found->second;
  entry.last_used = ++clock_;
  if (!entry.graph) {
    try {
      entry.graph = kernels::CudaGraph::capture(stream, work);
    } catch (const RuntimeFailure& failure) {
      // Work CUDA cannot capture (or a driver without graphs): this backend decodes eagerly.
      refused_ = true;
      last_failure_ = failure.what();
      graphs_.clear();
      ++counts_.eager;
      work();
      return;
    }
    ++counts_.captured;
  }
  entry.graph.launch(stream);
  ++counts_.replayed;
}

void StepGraphs::evict_least_recent() {
  const auto oldest = std::min_element(
      graphs_.begin(), graphs_.end(),
      [](const auto& a, const auto& b) { return a.second.last_used < b.second.last_used; });
  if (oldest != graphs_.end()) graphs_.erase(oldest);
}

}  // namespace rpt
