// One single-threaded block of gemm_cpu, computed so that each row of C is the same whatever m is
// and whatever the other rows of A hold (batch invariance, docs/PERFORMANCE.md).
//
// rpt chooses BLIS's sub-configuration itself, from the CPU's features, never from BLIS's own
// guess: BLIS 0.9 picks `generic` on CPUs it does not know (Zen 4 and 5) and `skx` on most
// AVX-512 Xeons, neither of which has the small-matrix (sup) kernels rpt relies on (forcing sup
// there divides by a zero register block: SIGFPE). Two paths, both row-invariant:
// - sup (AVX2 + FMA CPUs: haswell on Intel and others, zen3 on AMD): BLIS's unpacked path for
//   every shape, never its packed path, never a k split that depends on m or n, never BLIS's
//   one-column edge (a gemv whose row blocking follows m);
// - packed (CPUs without AVX2 or FMA: sandybridge with AVX, else generic): BLIS's ordinary
//   packed path, whose k blocks depend on k alone and whose micro-tiles sum each element in one
//   sequence wherever the tile falls.
// RPT_BLIS_CONFIG=NAME (haswell, zen3, zen2, zen, sandybridge, generic) and
// RPT_FLOAT32_GEMM=sup|packed force a choice (tests of the paths this CPU would not take); a
// configuration this CPU cannot execute, or sup where the configuration has none, is refused.
// Column blocks must start at multiples of blis_sgemm_column_multiple() for column j to meet the
// same kernel in every split. Its own translation unit because BLIS's headers ship a cblas.h of
// their own, which must not shadow OpenBLAS's elsewhere. Thread-safe (no state but a context
// chosen and built once, on first use).
#pragma once

#include <string>

#include "kernels/gemm.h"

namespace rpt::kernels {

void blis_sgemm_cpu(const GemmArgs& args);

// The width of the register block of C of the chosen path (16 floats with sup on AVX2).
int blis_sgemm_column_multiple();

// What runs, e.g. "blis-0.9.0 sup zen3"; throws InvalidArgument for a refused RPT_BLIS_CONFIG or
// RPT_FLOAT32_GEMM (so does every function here).
std::string blis_sgemm_description();

}  // namespace rpt::kernels
