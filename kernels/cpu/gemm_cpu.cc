#include <cblas.h>

#include "kernels/gemm.h"

namespace rpt::kernels {

void gemm_cpu(const GemmArgs& args) {
  if (args.m == 0 || args.n == 0) return;
  cblas_sgemm(CblasRowMajor, args.transpose_a ? CblasTrans : CblasNoTrans,
              args.transpose_b ? CblasTrans : CblasNoTrans, args.m, args.n, args.k, args.alpha,
              args.a, args.lda, args.b, args.ldb, args.beta, args.c, args.ldc);
}

void gemv_cpu(const GemvArgs& args) {
  if (args.rows == 0 || args.cols == 0) return;
  cblas_sgemv(CblasRowMajor, args.transpose_a ? CblasTrans : CblasNoTrans, args.rows, args.cols,
              args.alpha, args.a, args.lda, args.x, 1, args.beta, args.y, 1);
}

void set_cpu_blas_threads(int threads) {
  if (threads > 0) openblas_set_num_threads(threads);
}

int cpu_blas_threads() { return openblas_get_num_threads(); }

}  // namespace rpt::kernels
