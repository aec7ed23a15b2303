// Where the repository's test data lives: $RPT_SOURCE_DIR when set (tests carried to another
// machine, e.g. the GPU machine of bench/gpu_checks.sh), else the source tree they were built
// from.
#pragma once

#include <cstdlib>
#include <string>

namespace rpt::testing {

inline std::string source_dir() {
  const char* override_dir = std::getenv("RPT_SOURCE_DIR");
  return override_dir != nullptr && *override_dir != '\0' ? override_dir : RPT_SOURCE_DIR;
}

}  // namespace rpt::testing
