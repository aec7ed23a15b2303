#include "engine/cuda_plugin.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "kernels/errors.h"

namespace rpt {
namespace {

struct Plugin {
  MakeCudaEngineFunction* make_engine = nullptr;
  CudaDeviceCountFunction* device_count = nullptr;
  std::string error;  // why it is not loaded, when it is not
};

std::vector<std::string> candidates() {
  std::vector<std::string> out;
  if (const char* path = std::getenv("RPT_CUDA_PLUGIN"); path != nullptr && *path != '\0') {
    out.emplace_back(path);
  }
  Dl_info self{};
  if (dladdr(reinterpret_cast<void*>(&make_cuda_engine), &self) != 0 && self.dli_fname != nullptr) {
    std::error_code error;
    const std::filesystem::path binary = std::filesystem::canonical(self.dli_fname, error);
    if (!error) {
      out.push_back((binary.parent_path().parent_path() / "lib" / kCudaPluginFile).string());
      out.push_back((binary.parent_path() / kCudaPluginFile).string());
    }
  }
  return out;
}

// Never unloaded: engines made by the plugin run its code until the process ends.
Plugin load() {
  Plugin plugin;
  for (const std::string& path : candidates()) {
    if (!std::filesystem::exists(path)) continue;
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      plugin.error = "cannot load the CUDA engine " + path + ": " + (why ? why : "unknown error");
      return plugin;
    }
    plugin.make_engine =
        reinterpret_cast<MakeCudaEngineFunction*>(dlsym(handle, kMakeCudaEngineSymbol));
    plugin.device_count =
        reinterpret_cast<CudaDeviceCountFunction*>(dlsym(handle, kCudaDeviceCountSymbol));
    if (plugin.make_engine == nullptr || plugin.device_count == nullptr) {
      plugin = {};
      plugin.error = path + " is not rpt's CUDA engine (its entry points are missing)";
    }
    return plugin;
  }
  plugin.error = std::string("this build of rpt has no CUDA engine (") + kCudaPluginFile +
                 " not found; configure with -DRPT_WITH_CUDA=ON on a machine with the CUDA "
                 "toolkit, or set RPT_CUDA_PLUGIN)";
  return plugin;
}

const Plugin& plugin() {
  static const Plugin loaded = load();
  return loaded;
}

}  // namespace

std::shared_ptr<const Engine> make_cuda_engine(std::shared_ptr<const Model> model,
                                               const ComputeOptions& options) {
  const Plugin& cuda = plugin();
  RPT_CHECK(cuda.make_engine != nullptr, InvalidArgument, cuda.error);
  std::shared_ptr<const Engine> engine;
  cuda.make_engine(&model, &options, &engine);
  return engine;
}

int cuda_device_count() {
  const Plugin& cuda = plugin();
  return cuda.device_count != nullptr ? cuda.device_count() : 0;
}

}  // namespace rpt
