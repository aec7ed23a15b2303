// The CUDA engine lives in a plugin, librpt_cuda.so (engine/cuda/, kernels/cuda/), loaded with
// dlopen the first time a GPU is asked for, so a CPU process never maps CUDA's libraries. Looked
// for in $RPT_CUDA_PLUGIN (a file), then in ../lib/ beside the running binary's directory
// (build/lib, PREFIX/lib) and in that directory itself. Thread-safe: the first caller loads it, the
// result (or why it failed) is kept. Why a plugin: docs/ARCHITECTURE.md "Design notes".
#pragma once

#include <memory>
#include <string>

namespace rpt {

class Engine;
class Model;
struct ComputeOptions;

// The C++ entry points the plugin exports (extern "C" names, C++ types: the plugin is built
// with the binary that loads it).
extern "C" {
using MakeCudaEngineFunction = void(const std::shared_ptr<const Model>* model,
                                    const ComputeOptions* options,
                                    std::shared_ptr<const Engine>* out);
using CudaDeviceCountFunction = int();
}
inline constexpr const char* kMakeCudaEngineSymbol = "rpt_cuda_make_engine";
inline constexpr const char* kCudaDeviceCountSymbol = "rpt_cuda_device_count";
inline constexpr const char* kCudaPluginFile = "librpt_cuda.so";

}  // namespace rpt
