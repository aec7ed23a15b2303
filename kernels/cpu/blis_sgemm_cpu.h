// One single-threaded block of gemm_cpu, computed so that each row of C is the same whatever m is
// and whatever the other rows of A hold (batch invariance, docs/PERFORMANCE.md "Batch invariance
// by construction"). BLIS's sub-configuration is chosen from the CPU's features, never by BLIS's
// own guess, on one of two row-invariant paths: sup (AVX2 + FMA: haswell, zen3 on AMD), BLIS's
// unpacked path for every shape; packed (no AVX2 or FMA: sandybridge with AVX, else generic).
// Why, and what each path avoids: docs/engine.md "CPU and CUDA". RPT_BLIS_CONFIG=NAME (haswell,
// zen3, zen2, zen, sandybridge, generic) and RPT_FLOAT32_GEMM=sup|packed force a choice (for
// tests); one this CPU cannot execute, or sup where the configuration has none, is refused.
// Column blocks must start at multiples of blis_sgemm_column_multiple() for column j to meet the
// same kernel in every split. Thread-safe (a context chosen and built once, on first use).
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
