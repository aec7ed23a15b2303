// int8 linear layers on the CPU: weights quantized once per output row, activations per row at
// run time, u8 x s8 -> s32 products from oneDNN's matmul, float32 out with bias and activation.
//
//   w[n, k] ~= weight_scale[n] * qw[n, k]          qw in [-127, 127]  (kWeightLevels)
//   x[m, k] ~= input_scale[m]  * qx[m, k]          qx in [-63, 63]    (kInputLevels)
//   y[m, n]  = input_scale[m] * weight_scale[n] * sum_k qx[m, k] qw[n, k] + bias[n]
//
// oneDNN wants unsigned activations, so qx is stored shifted by kInputZeroPoint (u8 in
// [1, 127]) and the shift's contribution, kInputZeroPoint * sum_k qw[n, k], is subtracted from
// each integer sum. Activations get 7 bits: without VNNI (AVX2, AVX-512 before Cascade Lake)
// the x64 kernels add two u8 x s8 products in a saturating int16 (vpmaddubsw), and
// 2 * 127 * 127 fits where 2 * 255 * 127 does not (oneDNN then returns wrong sums, measured).
// One scheme on every CPU, VNNI or not.
//
// Integer sums are exact, so a row's output never depends on the other rows of the call; with
// the row-invariant float32 GEMMs of attention (kernels/gemm.h), whole int8 translations do not
// depend on their batch either. (When those GEMMs picked BLIS or OpenBLAS by row count, a last-bit
// difference rounded to another of the 63 activation levels now and then: 296 of 300 en-fr test
// sentences were identical at batch 1 and 32.)
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/activation.h"

namespace rpt::kernels {

inline constexpr int kWeightLevels = 127;
inline constexpr int kInputLevels = 63;
inline constexpr int kInputZeroPoint = 64;

// An immutable quantized weight matrix with the matmul primitive that multiplies it (created
// once, at quantization; shared by every call and thread). Thread-safe.
class Int8Weights {
 public:
  // Quantizes float32 weights [rows, cols] row by row. A row whose largest magnitude is 0 gets
  // scale 0 (its outputs are the bias); a non-finite value throws InvalidArgument naming the row.
  static std::shared_ptr<const Int8Weights> quantize(const float* weights,  // [rows, cols]
                                                     int rows, int cols);

  int rows() const { return rows_; }  // output features (n)
  int cols() const { return cols_; }  // input features (k)
  const std::int8_t* values() const { return values_.data(); }  // [rows, cols]
  const float* scales() const { return scales_.data(); }        // [rows]
  const std::int32_t* row_sums() const { return row_sums_.data(); }  // [rows]: sum_k qw[n, k]
  std::size_t bytes() const;

  // The oneDNN primitive for this matrix's k, runtime m and n (kernels/cpu/int8_gemm_cpu.cc).
  struct Primitive;
  const Primitive& primitive() const { return *primitive_; }

  ~Int8Weights();
  Int8Weights(const Int8Weights&) = delete;
  Int8Weights& operator=(const Int8Weights&) = delete;

 private:
  Int8Weights() = default;
  int rows_ = 0;
  int cols_ = 0;
  std::vector<std::int8_t> values_;
  std::vector<float> scales_;
  std::vector<std::int32_t> row_sums_;
  std::unique_ptr<Primitive> primitive_;
};

// Per-row symmetric quantization of activations into kInputZeroPoint-shifted u8.
void quantize_rows_cpu(const float* x,  // [rows, cols], row stride cols
                       int rows, int cols,
                       std::uint8_t* q,  // [rows, cols]
                       float* scales);   // [rows]; 0 for an all-zero row

struct Int8LinearArgs {
  const float* input = nullptr;  // [rows, weights->cols()]
  int rows = 0;
  const Int8Weights* weights = nullptr;
  const float* bias = nullptr;  // [weights->rows()], or nullptr
  ActivationKind activation = ActivationKind::kIdentity;
  float* output = nullptr;  // [rows, weights->rows()]
};

// output = activation(input W^T + bias) through int8 products, split over rpt's CPU threads.
void int8_linear_cpu(const Int8LinearArgs& args);

}  // namespace rpt::kernels
