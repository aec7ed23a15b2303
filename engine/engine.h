// A loaded model bound to the device it computes on. On the CPU that is the Model itself; on a
// GPU, the weights are uploaded once (in the compute precision) and shared by every decoder made
// from the engine. Thread-safe: share one Engine between threads; each decoding loop calls
// make_backend() for its own state.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "engine/decoder_backend.h"
#include "engine/device.h"
#include "engine/model.h"
#include "kernels/fused_attention.h"
#include "kernels/precision.h"

namespace rpt {

struct ComputeOptions {
  Device device = Device::kCpu;
  // Weights and activations on the GPU (accumulation is float32); the CPU computes in float32,
  // or in int8 for its linear layers (the model must then be loaded with ModelLoadOptions::int8).
  kernels::Precision precision = kernels::Precision::kFloat32;
  int device_index = 0;
  // Memory the engine may hold in all, past which work is refused with ResourceExhausted. On a
  // GPU: weights, decoders' caches and workspaces. On the CPU: the decoders' state (encoder
  // memory, KV caches); the weights are the Model's. 0: no limit but the device's.
  std::size_t memory_limit_bytes = 0;
  // GPU GEMMs computed the same way for every row count (one frozen cuBLASLt algorithm per
  // weight shape), so a sentence's translation does not depend on what it is batched with; false:
  // cuBLAS's fastest choice per call, rows may differ in the last bits between batches. The CPU
  // GEMMs are always row-invariant (kernels/gemm.h).
  bool batch_invariant = true;
  // GPU decoder steps replayed as CUDA graphs (engine/cuda/step_graphs.h): one launch instead of
  // ~50 per step, the same arithmetic (tested: identical translations with and without).
  bool gpu_graphs = true;
  // GPU decoder steps timed op by op with CUDA events (DecoderBackend::step_profile), run
  // eagerly (no graphs): where a step's time goes, for benchmarks; slower than the default.
  bool gpu_profile = false;
  // How the GPU's fused attention spreads a (row, head)'s keys over threads
  // (kernels/fused_attention.h); the same definition, rounding may differ in the last bits.
  kernels::CudaAttentionKernel gpu_attention = kernels::CudaAttentionKernel::kKeySplit;
};

// Parses "float32" | "float16" | "bfloat16" | "int8" (also "fp32", "fp16", "bf16"); throws
// InvalidArgument.
kernels::Precision parse_precision(const std::string& name);
// Parses "cpu" | "cuda"; throws InvalidArgument.
Device parse_device(const std::string& name);
// Parses "key-split" | "lane-groups"; throws InvalidArgument.
kernels::CudaAttentionKernel parse_gpu_attention(const std::string& name);

class Engine {
 public:
  virtual ~Engine() = default;

  // Throws InvalidArgument when the device is not available (no GPU, a CPU-only build) or the
  // options do not fit it, ResourceExhausted when the weights do not fit the memory limit.
  static std::shared_ptr<const Engine> create(std::shared_ptr<const Model> model,
                                              const ComputeOptions& options = {});

  const Model& model() const { return *model_; }
  const std::shared_ptr<const Model>& shared_model() const { return model_; }
  const ComputeOptions& options() const { return options_; }

  virtual std::unique_ptr<DecoderBackend> make_backend() const = 0;
  // Whether a backend is worth keeping between calls: the Translator keeps one idle backend
  // when making one costs (a GPU's stream, cuBLAS handles, frozen GEMM algorithms), at the price
  // of its buffers staying allocated between calls. The CPU's cost nothing to make.
  virtual bool keeps_backends() const { return false; }
  // Memory held by the engine and all its backends now, and at most so far: on a GPU all of it
  // (weights too), on the CPU the decoding state charged to the memory limit.
  virtual std::size_t device_memory_bytes() const { return 0; }
  virtual std::size_t peak_device_memory_bytes() const { return 0; }
  // "cpu" or e.g. "cuda:0 (NVIDIA H100 80GB HBM3)".
  virtual std::string device_description() const = 0;
  // On a GPU, the driver's view beside the count above (the CUDA context and cuBLAS are not in
  // it; the memory pool may reserve more than it hands out), one line; "" on the CPU.
  virtual std::string device_memory_report() const { return ""; }

 protected:
  Engine(std::shared_ptr<const Model> model, const ComputeOptions& options)
      : model_(std::move(model)), options_(options) {}
  // For an engine that holds its own copy of the weights (a GPU's): keeps the model without
  // them, so that they are freed once the caller lets go of its reference too.
  void let_go_of_host_weights() { model_ = model_->without_weights(); }

 private:
  std::shared_ptr<const Model> model_;
  ComputeOptions options_;
};

// The CUDA engine, from the plugin librpt_cuda.so (engine/cuda_plugin.h); throws
// InvalidArgument when there is none (a CPU-only build) or it cannot load.
std::shared_ptr<const Engine> make_cuda_engine(std::shared_ptr<const Model> model,
                                               const ComputeOptions& options);
// CUDA devices visible to the CUDA engine; 0 without the plugin, a driver or a GPU.
int cuda_device_count();

}  // namespace rpt
