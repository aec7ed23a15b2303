#include "kernels/cpu/blis_sgemm_cpu.h"

#include <blis.h>

namespace rpt::kernels {
namespace {

// BLIS's own context, changed in two ways that keep each element's sum one fixed sequence:
// - the thresholds below which BLIS takes its unpacked path (sup) are raised out of reach: from
//   512 rows (with n >= 200, k >= 240 on zen3) BLIS would otherwise switch to its packed path,
//   whose micro-kernel rounds differently;
// - sup's k block (KC) is raised past any k: BLIS 0.9 scales it by m and n (KC, KC/2, ... KC/5)
//   unless A is row- and B column-stored (x W^T), and each k block ends in a rounded store to C.
cntx_t* row_invariant_context() {
  static cntx_t context = [] {
    bli_init();
    cntx_t copy = *bli_gks_query_cntx();
    constexpr dim_t kNever = dim_t{1} << 40;  // KC / 5 still exceeds any int k
    for (const threshid_t threshold : {BLIS_MT, BLIS_NT, BLIS_KT}) {
      bli_blksz_set_def(kNever, BLIS_FLOAT, &copy.l3_sup_thresh[threshold]);
    }
    bli_blksz_set_def(kNever, BLIS_FLOAT, &copy.l3_sup_blkszs[BLIS_KC]);
    bli_blksz_set_max(kNever, BLIS_FLOAT, &copy.l3_sup_blkszs[BLIS_KC]);
    return copy;
  }();
  return &context;
}

// Single-threaded (gemm_cpu's blocks are the parallelism) and never packing (another path).
rntm_t serial_runtime() {
  rntm_t runtime = BLIS_RNTM_INITIALIZER;
  bli_rntm_set_num_threads(1, &runtime);
  bli_rntm_set_pack_a(false, &runtime);
  bli_rntm_set_pack_b(false, &runtime);
  return runtime;
}

// C[:, column] of `args`, one BLIS dot product per row: no other row takes part.
void column_by_dots(const GemmArgs& args, int column, rntm_t* runtime) {
  if (args.k == 0) {  // C = beta C; A and B may be empty (null), so no pointer into them
    for (int i = 0; i < args.m; ++i) {
      float& c = args.c[static_cast<long>(i) * args.ldc + column];
      c = args.beta == 0.0f ? 0.0f : args.beta * c;
    }
    return;
  }
  float alpha = args.alpha;
  float beta = args.beta;
  const long b_offset = args.transpose_b ? static_cast<long>(column) * args.ldb : column;
  float* b = const_cast<float*>(args.b + b_offset);
  const inc_t b_step = args.transpose_b ? 1 : args.ldb;
  const inc_t a_step = args.transpose_a ? args.lda : 1;
  for (int i = 0; i < args.m; ++i) {
    const long a_offset = args.transpose_a ? i : static_cast<long>(i) * args.lda;
    float* a = const_cast<float*>(args.a + a_offset);
    float* c = args.c + static_cast<long>(i) * args.ldc + column;
    bli_sdotxv_ex(BLIS_NO_CONJUGATE, BLIS_NO_CONJUGATE, args.k, &alpha, a, a_step, b, b_step,
                  &beta, c, row_invariant_context(), runtime);
  }
}

}  // namespace

void blis_sgemm_cpu(const GemmArgs& args) {
  rntm_t runtime = serial_runtime();
  // sup hands an odd last column to gemv, whose row blocking depends on m: BLIS gets the even
  // columns, and the last one is computed row by row.
  const int even_columns = args.n & ~1;
  if (even_columns > 0) {
    float alpha = args.alpha;
    float beta = args.beta;
    // BLIS takes the stored matrices' strides; m, n, k describe op(A) and op(B).
    bli_sgemm_ex(args.transpose_a ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE,
                 args.transpose_b ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE, args.m, even_columns,
                 args.k, &alpha, const_cast<float*>(args.a), args.lda, 1,
                 const_cast<float*>(args.b), args.ldb, 1, &beta, args.c, args.ldc, 1,
                 row_invariant_context(), &runtime);
  }
  if (even_columns < args.n) column_by_dots(args, args.n - 1, &runtime);
}

int blis_sgemm_column_multiple() {
  static const int multiple = static_cast<int>(
      bli_cntx_get_l3_sup_blksz_def_dt(BLIS_FLOAT, BLIS_NR, row_invariant_context()));
  return multiple;
}

}  // namespace rpt::kernels
