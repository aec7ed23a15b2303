#include "kernels/cuda/cuda_check.h"
#include "kernels/gemm.h"

namespace rpt::kernels {
namespace {

cudaDataType_t cuda_data_type(Precision precision) {
  switch (precision) {
    case Precision::kFloat16:
      return CUDA_R_16F;
    case Precision::kBFloat16:
      return CUDA_R_16BF;
    case Precision::kFloat32:
      break;
  }
  return CUDA_R_32F;
}

}  // namespace

// Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: swap the operands, keep the
// transposition flags (a row-major matrix read as column-major is already transposed).
//
// CUBLAS_COMPUTE_32F accumulates in float32 for every input type (float16 and bfloat16 inputs
// use tensor cores with float32 accumulation). For float32 inputs it never rounds them to TF32:
// TF32 needs CUBLAS_COMPUTE_32F_FAST_TF32 or the handle's CUBLAS_TF32_TENSOR_OP_MATH mode, and
// the engine keeps handles in the default math mode, so float32 GEMMs match the CPU BLAS to
// float32 rounding (TF32 keeps only 10 mantissa bits: errors of 1e-3, not 1e-6).
void gemm_cuda(const GemmCudaArgs& args, cublasContext* handle) {
  if (args.m == 0 || args.n == 0) return;
  // The combinations cublasGemmEx supports with CUBLAS_COMPUTE_32F.
  RPT_CHECK(args.output_precision == args.input_precision ||
                args.output_precision == Precision::kFloat32,
            InvalidArgument, "GEMM of ", precision_name(args.input_precision),
            " inputs cannot write ", precision_name(args.output_precision));
  const cudaDataType_t input_type = cuda_data_type(args.input_precision);
  RPT_CUBLAS_CHECK(cublasGemmEx(
      handle, args.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N,
      args.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N, args.n, args.m, args.k, &args.alpha, args.b,
      input_type, args.ldb, args.a, input_type, args.lda, &args.beta, args.c,
      cuda_data_type(args.output_precision), args.ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

}  // namespace rpt::kernels
