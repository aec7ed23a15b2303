// float32 linear layers on weights packed once, at load, for oneDNN's packed sgemm: rpt's float32
// GEMM for weights where oneDNN dispatches to AVX-512. There it is batch-invariant (each output
// row the same whatever rows share the call, measured on every shape
// tests/kernels/gemm_invariance_test.cc tries) and about twice BLIS's AVX2 sup kernels
// (docs/PERFORMANCE.md "float32 on AVX-512"); on AVX2 its tail kernels sum a row differently by
// batch, so BLIS stays (kernels/gemm.h). Activations against activations (attention) stay on
// gemm_cpu everywhere.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace rpt::kernels {

class PackedFloat32Weights {
 public:
  // weights [rows, cols] (output features, input features) in column blocks of
  // packed_block_columns(rows) output features, each packed alone. Throws RuntimeFailure when
  // oneDNN cannot pack (float32_linear_packed() false).
  static std::shared_ptr<const PackedFloat32Weights> pack(const float* weights, int rows, int cols);

  int rows() const { return rows_; }  // output features (n)
  int cols() const { return cols_; }  // input features (k)
  // Block b covers output features [b * block_columns(), min(rows(), (b + 1) * block_columns())).
  int block_columns() const { return block_columns_; }
  // What the packed blocks hold in memory: the pages packing wrote, about the plain matrix's
  // bytes (counted once, after packing).
  std::size_t bytes() const { return bytes_; }
  // The layout's size, padding included: oneDNN's sub-blocks round a matrix up (by 16% at
  // 1024 x 1024, 83% at 12288 x 1024), but the padding is never written, so never resident
  // (kernels/cpu/onednn_cpu.h, PackedBlockBuffer).
  std::size_t layout_bytes() const;

  ~PackedFloat32Weights();
  PackedFloat32Weights(const PackedFloat32Weights&) = delete;
  PackedFloat32Weights& operator=(const PackedFloat32Weights&) = delete;

  struct Blocks;  // oneDNN's packed layout (kernels/cpu/packed_sgemm_cpu.cc)
  const Blocks& blocks() const { return *blocks_; }

 private:
  PackedFloat32Weights() = default;
  int rows_ = 0;
  int cols_ = 0;
  int block_columns_ = 0;
  std::size_t bytes_ = 0;
  std::unique_ptr<const Blocks> blocks_;
};

struct PackedLinearArgs {
  const float* input = nullptr;  // [rows, weights->cols()], row stride input_stride
  int input_stride = 0;
  int rows = 0;
  const PackedFloat32Weights* weights = nullptr;
  float* output = nullptr;  // [rows, weights->rows()], row stride output_stride
  int output_stride = 0;
};

// output = input W^T, split over rpt's CPU threads by column blocks or rows (never along k).
void packed_linear_cpu(const PackedLinearArgs& args);

// Whether float32 linear layers run on packed weights on this CPU: with RPT_FLOAT32_GEMM unset,
// when oneDNN's packed sgemm is present and dispatches to avx512_core or above
// (ONEDNN_MAX_CPU_ISA applied); RPT_FLOAT32_GEMM=onednn asks for it (refused, InvalidArgument,
// where that does not hold), sup or packed keep BLIS's paths for every GEMM.
bool float32_linear_packed();

// What float32 linear layers run on: "onednn-2.6.3 packed avx512_core", or the BLIS GEMM's
// description (kernels/cpu/blis_sgemm_cpu.h).
std::string float32_linear_description();

}  // namespace rpt::kernels
