// GEMMs of few rows: BLIS's unpacked small-matrix path (sup). Single-threaded; gemm_cpu splits.
// Its own translation unit because BLIS's headers ship a cblas.h of their own, which must not
// shadow OpenBLAS's in gemm_cpu.cc.
#pragma once

#include "kernels/gemm.h"

namespace rpt::kernels {

void small_gemm_cpu(const GemmArgs& args);

}  // namespace rpt::kernels
