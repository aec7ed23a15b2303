#include "kernels/cpu/small_gemm_cpu.h"

#include <blis.h>

namespace rpt::kernels {

void small_gemm_cpu(const GemmArgs& args) {
  rntm_t runtime = BLIS_RNTM_INITIALIZER;
  bli_rntm_set_num_threads(1, &runtime);  // gemm_cpu's chunks are the parallelism
  float alpha = args.alpha;
  float beta = args.beta;
  // BLIS takes the stored matrices' strides; m, n, k describe op(A) and op(B).
  bli_sgemm_ex(args.transpose_a ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE,
               args.transpose_b ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE, args.m, args.n, args.k,
               &alpha, const_cast<float*>(args.a), args.lda, 1, const_cast<float*>(args.b),
               args.ldb, 1, &beta, args.c, args.ldc, 1, nullptr, &runtime);
}

}  // namespace rpt::kernels
