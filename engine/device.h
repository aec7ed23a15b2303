// Where a tensor's memory lives and where an op runs.
#pragma once

#include <string_view>

namespace rpt {

enum class Device { kCpu, kCuda };

inline std::string_view device_name(Device device) {
  return device == Device::kCpu ? "cpu" : "cuda";
}

}  // namespace rpt
