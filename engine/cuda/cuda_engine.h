// The CUDA engine: a Model's weights on one GPU (DeviceWeights, uploaded once, shared by every
// backend) and the budget that bounds all device memory the engine and its backends hold.
#pragma once

#include <memory>
#include <string>

#include "engine/cuda/device_weights.h"
#include "engine/engine.h"
#include "kernels/cuda/device_buffer.h"

namespace rpt {

class CudaEngine final : public Engine {
 public:
  CudaEngine(std::shared_ptr<const Model> model, const ComputeOptions& options);

  std::unique_ptr<DecoderBackend> make_backend() const override;
  bool keeps_backends() const override { return true; }
  std::size_t device_memory_bytes() const override { return budget_->used_bytes(); }
  std::size_t peak_device_memory_bytes() const override { return budget_->peak_bytes(); }
  std::string device_description() const override { return description_; }
  std::string device_memory_report() const override;

  const DeviceWeights& weights() const { return *weights_; }
  kernels::MemoryBudget& budget() const { return *budget_; }

 private:
  std::string description_;
  // Bytes in use on the device (every process) once the context existed, and after the upload.
  std::size_t device_used_at_start_ = 0;
  std::size_t device_used_after_weights_ = 0;
  std::unique_ptr<kernels::MemoryBudget> budget_;     // outlives every buffer charged to it
  std::unique_ptr<kernels::CudaStreamOwner> stream_;  // the upload stream; outlives weights_
  std::unique_ptr<DeviceWeights> weights_;
};

}  // namespace rpt
