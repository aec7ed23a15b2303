#include "kernels/cuda/cuda_check.h"
#include "kernels/gemm.h"

namespace rpt::kernels {

// Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: swap the operands, keep the
// transposition flags (a row-major matrix read as column-major is already transposed).
void gemm_cuda(const GemmArgs& args, cublasContext* handle) {
  if (args.m == 0 || args.n == 0) return;
  RPT_CUBLAS_CHECK(cublasSgemm(handle, args.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                               args.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N, args.n, args.m,
                               args.k, &args.alpha, args.b, args.ldb, args.a, args.lda,
                               &args.beta, args.c, args.ldc));
}

}  // namespace rpt::kernels
