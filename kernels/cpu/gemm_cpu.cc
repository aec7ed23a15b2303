#include <cblas.h>

#include "kernels/gemm.h"
#include "kernels/parallel.h"

namespace rpt::kernels {
namespace {

void sgemm(const GemmArgs& args) {
  cblas_sgemm(CblasRowMajor, args.transpose_a ? CblasTrans : CblasNoTrans,
              args.transpose_b ? CblasTrans : CblasNoTrans, args.m, args.n, args.k, args.alpha,
              args.a, args.lda, args.b, args.ldb, args.beta, args.c, args.ldc);
}

// Below this many multiply-adds a GEMM is not worth splitting.
constexpr long kSplitWork = 1L << 18;

}  // namespace

// The CPU threads split the larger of m and n; every chunk is one single-threaded sgemm over the
// whole k, so each element of C is summed in the same order however the work is split.
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
