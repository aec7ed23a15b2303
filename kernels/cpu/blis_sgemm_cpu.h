// One single-threaded block of gemm_cpu, computed so that each row of C is the same whatever m is
// and whatever the other rows of A hold (batch invariance, docs/PERFORMANCE.md): BLIS's unpacked
// path (sup) for every shape, never its packed path, never a k split that depends on m or n, and
// never BLIS's one-column edge (a gemv whose row blocking follows m). Column blocks must start at
// multiples of blis_sgemm_column_multiple() for column j to meet the same kernel in every split.
// Its own translation unit because BLIS's headers ship a cblas.h of their own, which must not
// shadow OpenBLAS's elsewhere. Thread-safe (no state but a context built once).
#pragma once

#include "kernels/gemm.h"

namespace rpt::kernels {

void blis_sgemm_cpu(const GemmArgs& args);

// The width of BLIS's register block of C (NR; 16 floats on haswell and zen).
int blis_sgemm_column_multiple();

}  // namespace rpt::kernels
