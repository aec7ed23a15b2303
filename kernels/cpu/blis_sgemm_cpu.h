// One single-threaded block of gemm_cpu: each row of C the same whatever m is and whatever the
// other rows of A hold (batch invariance). BLIS's sub-configuration is chosen from the CPU's
// features on a row-invariant path: sup (AVX2 + FMA) or packed (else); RPT_BLIS_CONFIG=NAME and
// RPT_FLOAT32_GEMM=sup|packed force one (for tests), refused where this CPU cannot run it. Column
// blocks start at multiples of blis_sgemm_column_multiple(). Thread-safe. Why and which paths:
// docs/engine.md "CPU and CUDA".
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
