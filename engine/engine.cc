#include "engine/engine.h"

#include <algorithm>
#include <cctype>

#include "engine/cpu/cpu_engine.h"
#include "kernels/cpu_kernels.h"
#include "kernels/errors.h"

namespace rpt {
namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

}  // namespace

kernels::Precision parse_precision(const std::string& name) {
  const std::string key = lower(name);
  if (key == "float32" || key == "fp32") return kernels::Precision::kFloat32;
  if (key == "float16" || key == "fp16") return kernels::Precision::kFloat16;
  if (key == "bfloat16" || key == "bf16") return kernels::Precision::kBFloat16;
  if (key == "int8") return kernels::Precision::kInt8;
  RPT_THROW(InvalidArgument, "unknown compute precision '", name,
            "' (expected float32, float16, bfloat16 or int8)");
}

Device parse_device(const std::string& name) {
  const std::string key = lower(name);
  if (key == "cpu") return Device::kCpu;
  if (key == "cuda" || key == "gpu") return Device::kCuda;
  RPT_THROW(InvalidArgument, "unknown device '", name, "' (expected cpu or cuda)");
}

kernels::CudaAttentionKernel parse_gpu_attention(const std::string& name) {
  for (const auto kernel :
       {kernels::CudaAttentionKernel::kKeySplit, kernels::CudaAttentionKernel::kLaneGroups}) {
    if (lower(name) == kernels::cuda_attention_kernel_name(kernel)) return kernel;
  }
  RPT_THROW(InvalidArgument, "unknown GPU attention kernel '", name,
            "' (expected key-split or lane-groups)");
}

std::shared_ptr<const Engine> Engine::create(std::shared_ptr<const Model> model,
                                             const ComputeOptions& options) {
  RPT_CHECK(model != nullptr, InvalidArgument, "an engine needs a model");
  model->weights();  // throws for a model whose weights are on a GPU engine only
  const bool int8 = options.precision == kernels::Precision::kInt8;
  RPT_CHECK(!int8 || options.device == Device::kCpu, InvalidArgument,
            "--compute-type int8 runs on the CPU only (there is no CUDA int8 path yet)");
  RPT_CHECK(model->int8() == int8, InvalidArgument, "the model was loaded ",
            model->int8() ? "with" : "without", " int8 weights for compute type ",
            kernels::precision_name(options.precision),
            " (load it with ModelLoadOptions::int8 = (compute type == int8))");
  if (options.device == Device::kCuda) return make_cuda_engine(std::move(model), options);
  RPT_CHECK(options.precision == kernels::Precision::kFloat32 || int8, InvalidArgument,
            "the CPU computes in float32 or int8; ", kernels::precision_name(options.precision),
            " needs --device cuda");
  kernels::cpu_kernels();  // chosen now: an override this CPU cannot run fails here, not mid-call
  return make_cpu_engine(std::move(model), options);
}

}  // namespace rpt
