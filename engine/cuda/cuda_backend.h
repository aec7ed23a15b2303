// The CUDA decoder backend: encoder and decoder steps on the GPU of a CudaEngine. Per step the host
// sends one packed buffer (tokens, positions, beam parents, blocked tokens, sequence addresses)
// and gets back one (each row's top-k candidates); the KV cache [rows, layers, capacity, 2, A],
// every sentence's encoder memory (shared by its beams), activations and logits stay on the
// device. Not thread-safe: one backend per decoding loop, on its own stream and cuBLAS handle.
#pragma once

#include <atomic>
#include <memory>
#include <vector>

#include "engine/cuda/cuda_engine.h"
#include "engine/cuda/step_graphs.h"
#include "engine/decoder_backend.h"
#include "kernels/cuda/cublas_handle.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/stream_timer.h"
#include "kernels/kv_cache.h"

namespace rpt {

// A device buffer that grows (never shrinks) to the largest size asked for; its contents do not
// survive growth.
class GrowingBuffer {
 public:
  void* reserve(std::size_t bytes, kernels::CudaStream stream, kernels::MemoryBudget* budget);
  std::size_t bytes() const { return buffer_.bytes(); }

 private:
  kernels::DeviceBuffer buffer_;
};

class CudaBackend final : public DecoderBackend {
 public:
  explicit CudaBackend(const CudaEngine& engine);
  ~CudaBackend() override;

  std::vector<EncodedSentence> encode(const std::vector<std::vector<int>>& sources) override;
  void step(const StepInput& input, StepCandidates& out) override;
  std::size_t device_memory_bytes() const override;
  StepGraphCounts graph_counts() const override { return graphs_.counts(); }
  StepProfile step_profile() const override { return profile_; }

 private:
  void prepare_cache(int rows, int needed_positions, int max_positions);
  kernels::CudaStream stream() const { return stream_->get(); }

  const CudaEngine& engine_;
  const Model& model_;
  const DeviceWeights& weights_;
  kernels::Precision precision_;
  kernels::MemoryBudget* budget_;
  std::shared_ptr<kernels::CudaStreamOwner> stream_;  // shared with encoder memory buffers
  std::unique_ptr<kernels::CublasHandle> cublas_;
  kernels::DeviceBuffer cublas_workspace_;  // charged to the budget like every rpt allocation

  GrowingBuffer encoder_workspace_;
  GrowingBuffer step_workspace_;
  GrowingBuffer step_inputs_;
  kernels::CacheLayout layout_;
  kernels::DeviceBuffer cache_;  // [cache_rows_, layout_]
  kernels::DeviceBuffer spare_;  // the gather target, swapped with cache_ every step
  int cache_rows_ = 0;
  std::vector<int> cached_lengths_;  // [cache_rows_]: positions each row holds
  // Bytes of the encoder memory still held by active sentences (shared with their buffers).
  std::shared_ptr<std::atomic<std::size_t>> encoder_memory_bytes_ =
      std::make_shared<std::atomic<std::size_t>>(0);
  std::vector<char> host_inputs_;
  std::vector<char> host_results_;
  StepGraphs graphs_;
  std::unique_ptr<kernels::StreamTimer> timer_;  // with ComputeOptions::gpu_profile
  StepProfile profile_;
};

}  // namespace rpt
