#include "engine/cuda/cuda_engine.h"

#include <cstdio>

#include "engine/cuda/cuda_backend.h"
#include "engine/cuda_plugin.h"
#include "kernels/fused_attention.h"
#include "kernels/errors.h"

namespace rpt {

CudaEngine::CudaEngine(std::shared_ptr<const Model> model, const ComputeOptions& options)
    : Engine(std::move(model), options) {
  // The fused attention's limits for both stacks, before any device is touched.
  const PositionConfig& position = this->model().config().position;
  const int head_dim = this->model().config().architecture.head_dim();
  kernels::check_fused_attention_cuda_shape(head_dim, position.encoder_max_relative_position);
  kernels::check_fused_attention_cuda_shape(head_dim, position.decoder_max_relative_position);
  const int devices = kernels::cuda_device_count();
  RPT_CHECK(devices > 0, InvalidArgument,
            "--device cuda: no CUDA device is visible (driver missing or no GPU)");
  RPT_CHECK(options.device_index >= 0 && options.device_index < devices, InvalidArgument,
            "CUDA device ", options.device_index, " does not exist (", devices, " visible)");
  kernels::set_current_device(options.device_index);
  kernels::keep_freed_device_memory();
  device_used_at_start_ = kernels::device_memory_report().device_used_bytes;
  description_ = "cuda:" + std::to_string(options.device_index) + " (" +
                 kernels::cuda_device_name(options.device_index) + ")";
  budget_ = std::make_unique<kernels::MemoryBudget>(options.memory_limit_bytes);
  stream_ = std::make_unique<kernels::CudaStreamOwner>();
  weights_ = std::make_unique<DeviceWeights>(this->model(), options.precision, stream_->get(),
                                             budget_.get());
  let_go_of_host_weights();
  stream_->synchronize();
  device_used_after_weights_ = kernels::device_memory_report().device_used_bytes;
}

std::string CudaEngine::device_memory_report() const {
  const kernels::DeviceMemoryReport now = kernels::device_memory_report();
  const auto mib = [](std::size_t bytes) { return static_cast<double>(bytes) / 1048576.0; };
  char line[512];
  std::snprintf(line, sizeof line,
                "device memory (driver): %.0f MiB in use on the device once the CUDA context "
                "existed (other processes included), %+.0f MiB by the weights' upload, %.0f MiB "
                "now; the memory pool reserved at most %.0f MiB (%.0f MiB now) for at most %.0f "
                "MiB in use",
                mib(device_used_at_start_),
                mib(device_used_after_weights_) - mib(device_used_at_start_),
                mib(now.device_used_bytes), mib(now.pool_reserved_peak_bytes),
                mib(now.pool_reserved_bytes), mib(now.pool_used_peak_bytes));
  return line;
}

std::unique_ptr<DecoderBackend> CudaEngine::make_backend() const {
  return std::make_unique<CudaBackend>(*this);
}

}  // namespace rpt

// The plugin's entry points (engine/cuda_plugin.h), the only symbols librpt_cuda.so exports.
extern "C" __attribute__((visibility("default"))) void rpt_cuda_make_engine(
    const std::shared_ptr<const rpt::Model>* model, const rpt::ComputeOptions* options,
    std::shared_ptr<const rpt::Engine>* out) {
  *out = std::make_shared<rpt::CudaEngine>(*model, *options);
}

extern "C" __attribute__((visibility("default"))) int rpt_cuda_device_count() {
  return rpt::kernels::cuda_device_count();
}
