// Which kernels run rpt's CPU ops on this machine, chosen at run time from what the CPU offers
// (kernels/cpu/cpu_features.h) and what the linked libraries provide; every binary names them
// (rpt-translate --verbose, rpt-server's start-up log and rpt_cpu_kernels_info, the benchmarks).
#pragma once

#include <string>

namespace rpt::kernels {

struct CpuKernels {
  std::string isa;      // the CPU's vector extensions, e.g. "avx avx2 fma f16c"
  std::string float32;  // the float32 GEMMs, e.g. "blis-0.9.0 sup zen3"
  // float32 linear layers (weights): "onednn-2.6.3 packed avx512_core" on AVX-512, else as
  // float32 (kernels/packed_sgemm.h)
  std::string float32_linear;
  std::string int8;  // the int8 products, e.g. "onednn-2.6.3 packed avx2"

  // "cpu: avx avx2 fma f16c; float32: blis-0.9.0 sup zen3; float32 linear: blis-0.9.0 sup zen3;
  // int8: onednn-2.6.3 packed avx2"
  std::string summary() const;
};

// Chosen once, on first use (before any GEMM runs; call it at start-up to fail early): throws
// InvalidArgument when RPT_BLIS_CONFIG or RPT_FLOAT32_GEMM asks for what this CPU cannot run.
const CpuKernels& cpu_kernels();

}  // namespace rpt::kernels
