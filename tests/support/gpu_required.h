// Test support: GPU tests skip visibly on a machine without a usable CUDA device, and fail
// instead where RPT_REQUIRE_GPU=1 (the GPU runbook, bench/gpu_checks.sh): there a driver or
// library that does not resolve must not pass as "all skipped".
#pragma once

#include <cstdlib>
#include <cstring>

#include "kernels/cuda/device_buffer.h"

namespace rpt::testing {

inline bool gpu_required() {
  const char* setting = std::getenv("RPT_REQUIRE_GPU");
  return setting != nullptr && std::strcmp(setting, "1") == 0;
}

}  // namespace rpt::testing

// In a test body or SetUp(): returns from it, skipped (or failed under RPT_REQUIRE_GPU=1) with
// CUDA's reason, when no device can be used.
#define RPT_SKIP_WITHOUT_GPU(what)                                                     \
  do {                                                                                 \
    const std::string rpt_gpu_unavailable = ::rpt::kernels::cuda_unavailable_reason(); \
    if (!rpt_gpu_unavailable.empty()) {                                                \
      if (::rpt::testing::gpu_required()) {                                            \
        FAIL() << "RPT_REQUIRE_GPU=1 and " << rpt_gpu_unavailable << ": " << (what)    \
               << " cannot be checked";                                                \
      }                                                                                \
      GTEST_SKIP() << rpt_gpu_unavailable << ": " << (what) << " not checked here";    \
    }                                                                                  \
  } while (0)
