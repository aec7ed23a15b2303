// A CUDA graph: the kernels and copies one piece of host code issues on a stream, captured once
// and replayed with a single launch (why: docs/ARCHITECTURE.md "Design notes"). A replay repeats
// the captured launches exactly (kernels, grid sizes, scalar arguments, pointers): whatever
// changes between replays the kernels must read from device memory the caller rewrites before
// each launch (stream-ordered copies outside the graph).
#pragma once

#include <functional>

#include "kernels/stream.h"

struct CUgraphExec_st;

namespace rpt::kernels {

class CudaGraph {
 public:
  CudaGraph() = default;
  ~CudaGraph();
  CudaGraph(CudaGraph&& other) noexcept;
  CudaGraph& operator=(CudaGraph&& other) noexcept;
  CudaGraph(const CudaGraph&) = delete;
  CudaGraph& operator=(const CudaGraph&) = delete;

  // Captures what `work` issues on `stream` (nothing runs), then instantiates it. Capture is
  // thread-local: other threads' CUDA calls (allocations of other backends) go on unaffected.
  // If `work` throws, the capture is abandoned and its exception propagates; if CUDA refuses the
  // capture (work that cannot be captured), throws RuntimeFailure. `stream` is usable after
  // either.
  static CudaGraph capture(CudaStream stream, const std::function<void()>& work);

  // Runs the captured work on `stream`, in order with the stream's other work.
  void launch(CudaStream stream) const;
  explicit operator bool() const { return exec_ != nullptr; }

 private:
  CUgraphExec_st* exec_ = nullptr;
};

}  // namespace rpt::kernels
