// BLIS called as gemm_cpu called it before batch invariance (its own context: the small-matrix
// path below its thresholds, packed above), for gemm_bench's comparison. Its own translation
// unit: BLIS's headers ship a cblas.h that must not shadow OpenBLAS's.
#include <blis.h>

#include "kernels/gemm.h"

namespace rpt::kernels {

void blis_default_sgemm(const GemmArgs& args) {
  rntm_t runtime = BLIS_RNTM_INITIALIZER;
  bli_rntm_set_num_threads(1, &runtime);
  float alpha = args.alpha;
  float beta = args.beta;
  bli_sgemm_ex(args.transpose_a ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE,
               args.transpose_b ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE, args.m, args.n, args.k,
               &alpha, const_cast<float*>(args.a), args.lda, 1, const_cast<float*>(args.b),
               args.ldb, 1, &beta, args.c, args.ldc, 1, nullptr, &runtime);
}

}  // namespace rpt::kernels
