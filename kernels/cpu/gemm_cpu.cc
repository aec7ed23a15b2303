#include <cblas.h>

#include "kernels/cpu/small_gemm_cpu.h"
#include "kernels/gemm.h"
#include "kernels/parallel.h"

namespace rpt::kernels {
namespace {

// For few rows of C, BLIS's unpacked small-matrix path (sup) beats OpenBLAS, which packs the
// whole weight matrix on every call: 2.2x at 4 rows (one sentence at beam 4), 1.3x at 16 and
// 1.1x at 32 rows of k <= 512, but slower at k = 1024 from 16 rows; from 64 rows OpenBLAS's
// packed kernels win (bench/gemm_bench.cc, docs/PERFORMANCE.md).
bool small_rows(const GemmArgs& args) {
  return args.m <= 8 || (args.m <= 32 && args.k <= 512);
}

void sgemm(const GemmArgs& args) {
  if (small_rows(args)) {
    small_gemm_cpu(args);
    return;
  }
  cblas_sgemm(CblasRowMajor, args.transpose_a ? CblasTrans : CblasNoTrans,
              args.transpose_b ? CblasTrans : CblasNoTrans, args.m, args.n, args.k, args.alpha,
              args.a, args.lda, args.b, args.ldb, args.beta, args.c, args.ldc);
}

}  // namespace

// Split over rpt's CPU threads (parallel_gemm_blocks, never along k); every block is one
// single-threaded sgemm.
void gemm_cpu(const GemmArgs& args) {
  if (args.m == 0 || args.n == 0) return;
  parallel_gemm_blocks(args.m, args.n, args.k, [&](long m0, long m1, long n0, long n1) {
    GemmArgs block = args;
    block.m = static_cast<int>(m1 - m0);
    block.n = static_cast<int>(n1 - n0);
    block.a = args.transpose_a ? args.a + m0 : args.a + m0 * args.lda;
    block.b = args.transpose_b ? args.b + n0 * args.ldb : args.b + n0;
    block.c = args.c + m0 * args.ldc + n0;
    sgemm(block);
  });
}

// One OpenBLAS call per row and head in the decoder's self-attention (t + 1 cached positions x
// 64): measured 2x faster than plain vectorized loops at t = 4-100, so the call's overhead is
// not worth avoiding.
void gemv_cpu(const GemvArgs& args) {
  if (args.rows == 0 || args.cols == 0) return;
  cblas_sgemv(CblasRowMajor, args.transpose_a ? CblasTrans : CblasNoTrans, args.rows, args.cols,
              args.alpha, args.a, args.lda, args.x, 1, args.beta, args.y, 1);
}

}  // namespace rpt::kernels
