// Matrix multiply: C = alpha * op(A) * op(B) + beta * C, row-major, float32.
// CPU definition: BLIS's unpacked path for every shape, split across rpt's CPU threads
// (kernels/parallel.h), row-invariant: for a given op(B), row i of C is bitwise the same
// whatever m is, whatever the other rows of A hold and whatever the thread count, so a sentence's
// translation does not depend on its batch (kernels/cpu/blis_sgemm_cpu.h). Stateless.
#pragma once

#include "kernels/precision.h"
#include "kernels/stream.h"

namespace rpt::kernels {

class CublasHandle;  // kernels/cuda/cublas_handle.h

struct GemmArgs {
  bool transpose_a = false;
  bool transpose_b = false;
  int m = 0;  // rows of op(A) and C
  int n = 0;  // columns of op(B) and C
  int k = 0;  // columns of op(A), rows of op(B)
  float alpha = 1.0f;
  const float* a = nullptr;  // op(A): [m, k]; lda = row stride of A as stored
  int lda = 0;
  const float* b = nullptr;  // op(B): [k, n]; ldb = row stride of B as stored
  int ldb = 0;
  float beta = 0.0f;
  float* c = nullptr;  // [m, n], row stride ldc
  int ldc = 0;
};

void gemm_cpu(const GemmArgs& args);

// The device GEMM (cuBLAS, row-major as GemmArgs): A and B of `input_precision`, C of
// `output_precision` (float16 weights may write float32 logits), float32 accumulation. float32
// inputs never use TF32, so float32 results match the CPU to rounding. With the handle's
// GemmAlgorithm::kBatchInvariant (the default) every row of C is the same whatever m is; A, B
// and C must then be aligned like their row strides (up to 16 bytes).
struct GemmCudaArgs {
  Precision input_precision = Precision::kFloat32;
  Precision output_precision = Precision::kFloat32;
  bool transpose_a = false;
  bool transpose_b = false;
  int m = 0;
  int n = 0;
  int k = 0;
  float alpha = 1.0f;
  const void* a = nullptr;  // op(A): [m, k], row stride lda
  int lda = 0;
  const void* b = nullptr;  // op(B): [k, n], row stride ldb
  int ldb = 0;
  float beta = 0.0f;  // 1: accumulate into C (residual connections)
  void* c = nullptr;  // [m, n], row stride ldc
  int ldc = 0;
};

void gemm_cuda(const GemmCudaArgs& args, CublasHandle* handle);

// y = alpha * op(A) x + beta * y with A [rows, cols] row-major (row stride lda), or with row j
// of A at row_addresses[j] + row_offset when row_addresses is set (rows gathered from the
// decoder's position tree; a and lda unused). Each output's sum order depends on the shape
// alone, whichever way the rows are given.
struct GemvArgs {
  bool transpose_a = false;
  int rows = 0;
  int cols = 0;
  float alpha = 1.0f;
  const float* a = nullptr;
  int lda = 0;
  const float* const* row_addresses = nullptr;  // [rows]
  long row_offset = 0;
  const float* x = nullptr;  // [cols] (or [rows] when transposed)
  float beta = 0.0f;
  float* y = nullptr;  // [rows] (or [cols] when transposed)
};

void gemv_cpu(const GemvArgs& args);

}  // namespace rpt::kernels
