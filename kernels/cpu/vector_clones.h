// RPT_VECTOR_CLONES: compile a loop-heavy function twice, for AVX2 and for the baseline x86-64
// (SSE2) that rpt is built for, and pick the clone at load time from the CPU: 8-wide loops where
// the CPU has them, a binary that still runs everywhere.
#pragma once

#if defined(__x86_64__)
#define RPT_VECTOR_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define RPT_VECTOR_CLONES
#endif
