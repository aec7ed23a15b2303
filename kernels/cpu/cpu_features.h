// What the CPU this process runs on offers, read from CPUID and the OS's saved-state mask
// (XGETBV): an extension counts only when the OS also saves its registers. Read once; thread-safe.
#pragma once

#include <string>

namespace rpt::kernels {

struct CpuFeatures {
  std::string vendor;  // "GenuineIntel", "AuthenticAMD", ... ("" off x86)
  bool avx = false;
  bool avx2 = false;
  bool fma = false;
  bool f16c = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512vl = false;
  bool avx512_vnni = false;
  bool avx512_bf16 = false;
  bool avx_vnni = false;
  bool amx_int8 = false;

  // The vector extensions present, lscpu's spelling, e.g. "avx avx2 fma f16c".
  std::string extensions() const;
};

const CpuFeatures& cpu_features();

}  // namespace rpt::kernels
