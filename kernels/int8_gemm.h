// int8 linear layers on the CPU, u8 x s8 -> s32 products from oneDNN, float32 out with bias and
// activation: w[n, k] ~= weight_scale[n] qw[n, k] (qw in [-127, 127], kWeightLevels, once per
// output row), x[m, k] ~= input_scale[m] qx[m, k] (qx in [-L, L], per row at run time, L from
// int8_activation_levels()), y[m, n] = input_scale[m] weight_scale[n] sum_k qx qw + bias[n].
// Weights are packed once into oneDNN's GEMM layout, or stay plain (RPT_INT8_PACKED=0, a oneDNN
// without the packing functions, a matrix the layout would grow by more than half; =1 packs
// every one): exact integer sums, the same bits either way, and no row depends on the others.
// How and why: docs/engine.md "CPU and CUDA".
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/activation.h"

namespace rpt::kernels {

inline constexpr int kWeightLevels = 127;

// Activations quantized to [-levels, levels], stored as u8 shifted by zero_point.
struct ActivationLevels {
  int levels;
  int zero_point;
  int bits() const { return levels == 127 ? 8 : 7; }
  bool operator==(const ActivationLevels&) const = default;
};
inline constexpr ActivationLevels k7BitActivations{.levels = 63, .zero_point = 64};
inline constexpr ActivationLevels k8BitActivations{.levels = 127, .zero_point = 128};

// The levels for kernels whose u8 x s8 sums are exact or not, under RPT_INT8_ACTIVATION_BITS
// (`setting`, nullptr when unset): unset or "8": 8 bits where exact, else 7; "7": 7 bits;
// "8-unchecked": 8 bits even where oneDNN's kernels are not known to be exact (to probe a new
// CPU or oneDNN with the saturation tests, never for serving). Throws InvalidArgument otherwise.
ActivationLevels choose_activation_levels(bool exact_sums, const char* setting);
// This process's levels, chosen once from the ISA oneDNN dispatches to (ONEDNN_MAX_CPU_ISA
// applied) and RPT_INT8_ACTIVATION_BITS.
const ActivationLevels& int8_activation_levels();

// Weights [rows, cols] quantized row by row, not yet in their products' layout: what a matrix
// filled part by part holds (a model's fused projections). Each row is quantized alone, so
// quantizing the parts and stacking them gives the bits of quantizing the stack.
class QuantizedRows {
 public:
  // rows x cols rows, all zero until quantized; in `storage`'s memory when it holds enough (the
  // spare that from_rows handed back: a model loader's next matrix then needs no fresh pages).
  QuantizedRows(int rows, int cols, std::vector<std::int8_t> storage = {});

  // Quantizes weights [count, cols] into rows [first, first + count): qw = round(w * 127 /
  // max|w|) per row, its scale max|w| / 127 (0 for an all-zero row). Throws InvalidArgument for
  // rows outside the matrix or a non-finite value (naming its row).
  void quantize(int first, const float* weights, int count);

  // Rows stored quantized (an int8 model file: values [count, cols], weight = scale[r] * value)
  // into rows [first, first + count), with the bits quantize() gives their dequantized form:
  // taken as they are where that round trip is exact (the row's largest |value| 127, a normal
  // scale: the converters' rows), saving it; other rows make it. Throws as quantize().
  void take(int first, const std::int8_t* values, const float* scales, int count);

  int rows() const { return rows_; }
  int cols() const { return cols_; }

 private:
  friend class Int8Weights;
  int rows_;
  int cols_;
  std::vector<std::int8_t> values_;     // [rows, cols]
  std::vector<float> scales_;           // [rows]
  std::vector<std::int32_t> row_sums_;  // [rows]: sum_k qw[n, k]
};

// An immutable quantized weight matrix in the layout its products read, packed or plain (created
// once, at quantization; shared by every call and thread). Thread-safe.
class Int8Weights {
 public:
  // Quantizes float32 weights [rows, cols] row by row. A row whose largest magnitude is 0 gets
  // scale 0 (its outputs are the bias); a non-finite value throws InvalidArgument naming the row.
  static std::shared_ptr<const Int8Weights> quantize(const float* weights,  // [rows, cols]
                                                     int rows, int cols);
  // Rows quantized before (QuantizedRows::quantize), laid out for their products; their values
  // are taken, not copied. When the products copy them into a layout of their own (packed),
  // their storage is handed back in `spare` (if given) for the next QuantizedRows. Throws
  // InvalidArgument for an empty matrix.
  static std::shared_ptr<const Int8Weights> from_rows(QuantizedRows rows,
                                                      std::vector<std::int8_t>* spare = nullptr);

  int rows() const { return rows_; }                                 // output features (n)
  int cols() const { return cols_; }                                 // input features (k)
  const float* scales() const { return scales_.data(); }             // [rows]
  const std::int32_t* row_sums() const { return row_sums_.data(); }  // [rows]: sum_k qw[n, k]
  // Whether the products read oneDNN's packed blocks (else the plain matrix and the matmul).
  bool packed() const;
  // qw [rows, cols], read back through the products (the packed layout is oneDNN's own): for
  // tests and model writers, not for the hot path.
  std::vector<std::int8_t> unpacked_values() const;
  std::size_t bytes() const;  // what this object holds

  // The products run over column blocks of block_columns() output features (the last may be
  // narrower): block b covers [b * block_columns(), min(rows(), (b + 1) * block_columns())).
  int block_columns() const { return block_columns_; }
  int column_blocks() const { return (rows_ + block_columns_ - 1) / block_columns_; }

  // The integer sums of one column block (kernels/cpu/int8_gemm_cpu.cc).
  struct Products;
  const Products& products() const { return *products_; }

  ~Int8Weights();
  Int8Weights(const Int8Weights&) = delete;
  Int8Weights& operator=(const Int8Weights&) = delete;

 private:
  Int8Weights() = default;
  int rows_ = 0;
  int cols_ = 0;
  int block_columns_ = 0;
  std::vector<float> scales_;
  std::vector<std::int32_t> row_sums_;
  std::unique_ptr<const Products> products_;
};

// Per-row symmetric quantization of activations into int8_activation_levels()' shifted u8.
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
