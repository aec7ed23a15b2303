// Where a stream's time goes: CUDA events recorded between the ops a caller launches, read once
// the stream has synchronised. mark(label) closes the stretch of GPU time since the previous mark
// (or start()); stretches with the same label add up. For profiling runs (--gpu-profile), not
// the default path: every mark is an event record on the stream.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "kernels/stream.h"

struct CUevent_st;

namespace rpt::kernels {

class StreamTimer {
 public:
  explicit StreamTimer(CudaStream stream) : stream_(stream) {}
  ~StreamTimer();
  StreamTimer(const StreamTimer&) = delete;
  StreamTimer& operator=(const StreamTimer&) = delete;

  // Begins a round of marks (forgets the previous round's).
  void start();
  void mark(std::string label);
  // The round's stretches, label and milliseconds, in launch order; waits for the last event.
  std::vector<std::pair<std::string, float>> stretches();

 private:
  CUevent_st* event(std::size_t index);

  CudaStream stream_;
  std::vector<CUevent_st*> events_;  // reused from round to round
  std::vector<std::string> labels_;  // labels_[i] closes at events_[i + 1]
  std::size_t recorded_ = 0;
};

}  // namespace rpt::kernels
