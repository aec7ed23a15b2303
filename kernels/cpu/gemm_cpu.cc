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

// Below this many multiply-adds a GEMM is not worth splitting.
constexpr long kSplitWork = 1L << 18;

}  // namespace

// The CPU threads split the larger of m and n; every chunk is one single-threaded sgemm over the
// whole k (never split k: a row's sums would then depend on what else is in the batch).
void gemm_cpu(const GemmArgs& args) {
  if (args.m == 0 || args.n == 0) return;
  if (static_cast<long>(args.m) * args.n * args.k < kSplitWork) {
    sgemm(args);
    return;
  }
  if (args.m >= args.n) {
    parallel_for(args.m, 16, [&](long first, long last) {
      GemmArgs chunk = args;
      chunk.m = static_cast<int>(last - first);
      chunk.a = args.transpose_a ? args.a + first : args.a + first * args.lda;
      chunk.c = args.c + first * args.ldc;
      sgemm(chunk);
    });
  } else {
    parallel_for(args.n, 64, [&](long first, long last) {
      GemmArgs chunk = args;
      chunk.n = static_cast<int>(last - first);
      chunk.b = args.transpose_b ? args.b + first * args.ldb : args.b + first;
      chunk.c = args.c + first;
      sgemm(chunk);
    });
  }
}

void gemv_cpu(const GemvArgs& args) {
  if (args.rows == 0 || args.cols == 0) return;
  cblas_sgemv(CblasRowMajor, args.transpose_a ? CblasTrans : CblasNoTrans, args.rows, args.cols,
              args.alpha, args.a, args.lda, args.x, 1, args.beta, args.y, 1);
}

}  // namespace rpt::kernels
