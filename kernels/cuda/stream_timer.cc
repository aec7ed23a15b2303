#include "kernels/cuda/stream_timer.h"

#include <cuda_runtime.h>

#include "kernels/cuda/cuda_check.h"

namespace rpt::kernels {

StreamTimer::~StreamTimer() {
  for (CUevent_st* e : events_) cudaEventDestroy(e);  // errors at teardown are dropped
}

CUevent_st* StreamTimer::event(std::size_t index) {
  while (events_.size() <= index) {
    cudaEvent_t created = nullptr;
    RPT_CUDA_CHECK(cudaEventCreate(&created));
    events_.push_back(created);
  }
  return events_[index];
}

void StreamTimer::start() {
  labels_.clear();
  recorded_ = 0;
  RPT_CUDA_CHECK(cudaEventRecord(event(0), stream_));
  recorded_ = 1;
}

void StreamTimer::mark(std::string label) {
  if (recorded_ == 0) return;  // not started
  RPT_CUDA_CHECK(cudaEventRecord(event(recorded_), stream_));
  labels_.push_back(std::move(label));
  ++recorded_;
}

std::vector<std::pair<std::string, float>> StreamTimer::stretches() {
  std::vector<std::pair<std::string, float>> out;
  if (recorded_ < 2) return out;
  RPT_CUDA_CHECK(cudaEventSynchronize(events_[recorded_ - 1]));
  for (std::size_t i = 0; i + 1 < recorded_; ++i) {
    float milliseconds = 0.0f;
    RPT_CUDA_CHECK(cudaEventElapsedTime(&milliseconds, events_[i], events_[i + 1]));
    out.emplace_back(labels_[i], milliseconds);
  }
  return out;
}

}  // namespace rpt::kernels
