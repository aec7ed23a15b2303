#include "kernels/cpu/blis_sgemm_cpu.h"
#include "kernels/gemm.h"
#include "kernels/parallel.h"

namespace rpt::kernels {

// A sentence's translation must not depend on its batch, so no row of C may depend on m: one
// library path for every m (kernels/cpu/blis_sgemm_cpu.h), at a cost in speed at many rows. The
// history (a dispatch by m whose libraries rounded differently) and the measured cost:
// docs/PERFORMANCE.md "Batch invariance by construction".
//
// Split over rpt's CPU threads by rows or by columns, never along k, column blocks at multiples
// of BLIS's register block; every block is one single-threaded BLIS call.
void gemm_cpu(const GemmArgs& args) {
  if (args.m == 0 || args.n == 0) return;
  const auto block = [&](long m0, long m1, long n0, long n1) {
    GemmArgs part = args;
    part.m = static_cast<int>(m1 - m0);
    part.n = static_cast<int>(n1 - n0);
    part.a = args.transpose_a ? args.a + m0 : args.a + m0 * args.lda;
    part.b = args.transpose_b ? args.b + n0 * args.ldb : args.b + n0;
    part.c = args.c + m0 * args.ldc + n0;
    blis_sgemm_cpu(part);
  };
  parallel_gemm_blocks(args.m, args.n, args.k, block, blis_sgemm_column_multiple());
}

}  // namespace rpt::kernels
