// One single-threaded block of gemm_cpu, computed so that each row of C is the same whatever m is
// and whatever the other rows of A hold (batch invariance, docs/PERFORMANCE.md): BLIS's unpacked
// path (sup) for every shape, never its packed path, never a k split that depends on m or n, and
// never BLIS's one-column edge (a gemv whose row blocking follows m). Column blocks must start at
// multiples of kBlisColumnMultiple for column j to meet the same kernel in every split.
// Its own translation unit because BLIS's headers ship a cblas.h of their own, which must not
// shadow OpenBLAS's elsewhere. Thread-safe (no state but a context built once).
#pragma once

#include "kernels/gemm.h"

namespace rpt::kernels {

// BLIS sup's register block width (NR) on x86-64 (haswell, zen*): 16 float columns.
inline constexpr int kBlisColumnMultiple = 16;

void blis_sgemm_cpu(const GemmArgs& args);

}  // namespace rpt::kernels
