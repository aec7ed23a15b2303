// The CUDA engine lives in a plugin, librpt_cuda.so (engine/cuda/, kernels/cuda/), loaded with
// dlopen the first time a GPU is asked for. A CPU process therefore never maps CUDA's libraries,
// whose resident memory it would pay at load even without a GPU (docs/PERFORMANCE.md "int8 on
// the CPU, and where rpt-translate's memory went").
//
// The plugin is looked for in $RPT_CUDA_PLUGIN (a file), then beside the running binary's
// directory in ../lib/ (the build tree's build/lib, an install's PREFIX/lib) and in the
// directory itself. Thread-safe: the first caller loads it, the result (or why it failed) is kept.
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
