#include <algorithm>
#include <atomic>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/int8_products_cpu.h"
#include "kernels/cpu/onednn_cpu.h"
#include "kernels/cpu/vector_clones.h"
#include "kernels/errors.h"
#include "kernels/int8_gemm.h"
#include "kernels/parallel.h"

namespace rpt::kernels {
namespace {

// What one thread's part needs, reused across calls: quantized rows, their scales, one column
// block's sums.
struct BlockBuffers {
  std::vector<std::uint8_t> quantized;  // [rows, k]
  std::vector<float> row_scales;        // [rows]
  std::vector<std::int32_t> sums;       // [sum_rows, cols]
};

// Room for `rows` quantized rows and the sums of `sum_rows` of them over `cols` columns.
BlockBuffers& thread_buffers(int rows, int sum_rows, int cols, int k) {
  thread_local BlockBuffers buffers;
  const auto grow = [](auto& buffer, long size) {
    if (static_cast<long>(buffer.size()) < size) buffer.resize(static_cast<std::size_t>(size));
  };
  grow(buffers.quantized, static_cast<long>(rows) * k);
  grow(buffers.row_scales, rows);
  grow(buffers.sums, static_cast<long>(sum_rows) * cols);
  return buffers;
}

// The bits of a float's magnitude order like the magnitudes, and every NaN or infinity has bits
// of at least kNonFiniteBits: one integer max (which vectorises) gives both.
constexpr std::uint32_t kNonFiniteBits = 0x7f800000u;

RPT_VECTOR_CLONES std::uint32_t max_magnitude_bits(const float* x, int count) {
  std::uint32_t largest = 0;
  for (int i = 0; i < count; ++i) {
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(x[i]) & 0x7fffffffu;
    largest = bits > largest ? bits : largest;
  }
  return largest;
}

// out = round(x * inverse) + zero point, with x * inverse in [-levels, levels]: adding the zero
// point and 0.5 first (`offset`) makes the value positive, so truncation rounds (halves up) and
// the loop vectorises.
RPT_VECTOR_CLONES void quantize_row(const float* x, int count, float inverse, float offset,
                                    std::uint8_t* out) {
  for (int i = 0; i < count; ++i) {
    out[i] = static_cast<std::uint8_t>(static_cast<int>(x[i] * inverse + offset));
  }
}

// Serial per-row quantization of `rows` rows (quantize_rows_cpu splits it over threads).
void quantize_rows(const float* x, int rows, int cols, std::uint8_t* q, float* scales) {
  const ActivationLevels& levels = int8_activation_levels();
  const float offset = static_cast<float>(levels.zero_point) + 0.5f;
  for (int r = 0; r < rows; ++r) {
    const float* row = x + static_cast<long>(r) * cols;
    std::uint8_t* out = q + static_cast<long>(r) * cols;
    const std::uint32_t largest_bits = max_magnitude_bits(row, cols);
    if (largest_bits >= kNonFiniteBits) {
      // No int8 image: the row's outputs go NaN, as they would in float32, so the beam search
      // sees it.
      std::fill(out, out + cols, static_cast<std::uint8_t>(levels.zero_point));
      scales[r] = std::numeric_limits<float>::quiet_NaN();
      continue;
    }
    const float largest = std::bit_cast<float>(largest_bits);
    const auto steps = static_cast<float>(levels.levels);
    quantize_row(row, cols, largest > 0.0f ? steps / largest : 0.0f, offset, out);
    scales[r] = largest / steps;
  }
}

// q = lrint(w * inverse) over one weight row (|w * inverse| <= kWeightLevels), returning the sum
// of q: one at a time, or with AVX2 eight at a time, whose VCVTPS2DQ rounds as lrint does (the
// default round-to-nearest-even mode) the same float32 products: the same bits either way.
std::int32_t quantize_weight_row_portable(const float* w, int count, float inverse,
                                          std::int8_t* q) {
  std::int32_t sum = 0;
  for (int c = 0; c < count; ++c) {
    q[c] = static_cast<std::int8_t>(std::lrint(w[c] * inverse));
    sum += q[c];
  }
  return sum;
}

#if defined(__x86_64__)
__attribute__((target("avx2"))) std::int32_t quantize_weight_row_avx2(const float* w, int count,
                                                                      float inverse,
                                                                      std::int8_t* q) {
  const __m256 scale = _mm256_set1_ps(inverse);
  __m256i sums = _mm256_setzero_si256();
  int c = 0;
  for (; c + 8 <= count; c += 8) {
    const __m256i values = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(w + c), scale));
    sums = _mm256_add_epi32(sums, values);
    const __m128i words =
        _mm_packs_epi32(_mm256_castsi256_si128(values), _mm256_extracti128_si256(values, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(q + c), _mm_packs_epi16(words, words));
  }
  alignas(32) std::int32_t lanes[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), sums);
  std::int32_t sum = quantize_weight_row_portable(w + c, count - c, inverse, q + c);
  for (const std::int32_t lane : lanes) sum += lane;
  return sum;
}
#endif

std::int32_t quantize_weight_row(const float* w, int count, float inverse, std::int8_t* q) {
#if defined(__x86_64__)
  static const bool avx2 = cpu_features().avx2;
  if (avx2) return quantize_weight_row_avx2(w, count, inverse, q);
#endif
  return quantize_weight_row_portable(w, count, inverse, q);
}

// y = row_scale * weight_scale * (sum - zero_point * row_sum) + bias, for one row.
RPT_VECTOR_CLONES void dequantize_row(const std::int32_t* sums, int count, int zero_point,
                                      float row_scale, const float* weight_scales,
                                      const std::int32_t* row_sums, const float* bias, float* y) {
  for (int i = 0; i < count; ++i) {
    const auto product = static_cast<float>(sums[i] - zero_point * row_sums[i]);
    y[i] = product * row_scale * weight_scales[i] + (bias != nullptr ? bias[i] : 0.0f);
  }
}

// The sum of an int8 row and, in `largest`, its largest |value| (128 for -128), in one pass.
RPT_VECTOR_CLONES std::int32_t int8_row_sum(const std::int8_t* row, int count, int* largest) {
  std::int8_t high = 0;
  std::int8_t low = 0;
  std::int32_t sum = 0;
  for (int c = 0; c < count; ++c) {
    high = std::max(high, row[c]);
    low = std::min(low, row[c]);
    sum += row[c];
  }
  *largest = std::max(static_cast<int>(high), -static_cast<int>(low));
  return sum;
}

// Integer sums per product call at most (256 KiB, a quarter of a 1 MiB L2): a call covers fewer
// rows the wider its block, so that its sums are still in cache when they are dequantized.
constexpr int kSumsInCache = 65536;

// Weight elements a thread quantizes at least per call (a chunk of rows): below that, one thread.
constexpr int kRowsPerChunkElements = 65536;

void check_not_empty(int rows, int cols) {
  RPT_CHECK(rows > 0 && cols > 0, InvalidArgument, "int8 weights need a non-empty matrix, got ",
            rows, " x ", cols);
}

}  // namespace

Int8Weights::~Int8Weights() = default;

QuantizedRows::QuantizedRows(int rows, int cols, std::vector<std::int8_t> storage)
    : rows_(rows),
      cols_(cols),
      values_(std::move(storage)),
      scales_(static_cast<std::size_t>(std::max(rows, 0))),
      row_sums_(static_cast<std::size_t>(std::max(rows, 0))) {
  // Zeros in place: no reallocation when the storage holds enough.
  values_.assign(static_cast<std::size_t>(std::max(rows, 0)) * std::max(cols, 0), 0);
}

void QuantizedRows::quantize(int first, const float* weights, int count) {
  RPT_CHECK(first >= 0 && count >= 0 && first <= rows_ - count, InvalidArgument, "rows [", first,
            ", ", first + count, ") lie outside a matrix of ", rows_);
  // Rows in parallel, each alone: the bits do not depend on the threads. A row with a non-finite
  // value is left as it is; the first such row is named after all have run.
  std::atomic<int> first_non_finite{first + count};
  parallel_for(count, std::max(1, kRowsPerChunkElements / std::max(cols_, 1)),
               [&](long begin, long end) {
                 for (long r = first + begin; r < first + end; ++r) {
                   const float* row = weights + (r - first) * cols_;
                   const std::uint32_t largest_bits = max_magnitude_bits(row, cols_);
                   if (largest_bits >= kNonFiniteBits) {
                     int seen = first_non_finite.load();
                     while (r < seen && !first_non_finite.compare_exchange_weak(seen, r)) {
                     }
                     continue;
                   }
                   // The largest magnitude: its bits are the largest (max_magnitude_bits).
                   const float largest = std::bit_cast<float>(largest_bits);
                   const float inverse = largest > 0.0f ? kWeightLevels / largest : 0.0f;
                   row_sums_[static_cast<std::size_t>(r)] =
                       quantize_weight_row(row, cols_, inverse, values_.data() + r * cols_);
                   scales_[static_cast<std::size_t>(r)] = largest / kWeightLevels;
                 }
               });
  const int bad = first_non_finite.load();
  if (bad == first + count) return;
  const float* row = weights + static_cast<long>(bad - first) * cols_;
  const float* value = std::find_if(row, row + cols_, [](float x) { return !std::isfinite(x); });
  RPT_THROW(InvalidArgument, "weight row ", bad, " holds ", *value,
            ", which int8 cannot represent");
}

void QuantizedRows::take(int first, const std::int8_t* values, const float* scales, int count) {
  RPT_CHECK(first >= 0 && count >= 0 && first <= rows_ - count, InvalidArgument, "rows [", first,
            ", ", first + count, ") lie outside a matrix of ", rows_);
  // quantize() of row r's floats scale * value: its largest is scale * 127, each value times
  // 127 / largest is the value within a few float roundings (far from a half), so lrint gives
  // it back; its scale is largest / 127, not always the stored scale.
  std::vector<char> round_trip(static_cast<std::size_t>(count), 0);
  parallel_for(count, std::max(1, kRowsPerChunkElements / std::max(cols_, 1)),
               [&](long begin, long end) {
                 for (long i = begin; i < end; ++i) {
                   const std::int8_t* row = values + i * cols_;
                   const float largest = scales[i] * static_cast<float>(kWeightLevels);
                   int largest_value = 0;
                   const std::int32_t sum = int8_row_sum(row, cols_, &largest_value);
                   if (largest_value != kWeightLevels || !(scales[i] >= FLT_MIN) ||
                       !std::isfinite(largest)) {
                     round_trip[static_cast<std::size_t>(i)] = 1;
                     continue;
                   }
                   const std::size_t r = static_cast<std::size_t>(first + i);
                   std::memcpy(values_.data() + r * cols_, row, static_cast<std::size_t>(cols_));
                   row_sums_[r] = sum;
                   scales_[r] = largest / kWeightLevels;
                 }
               });
  std::vector<float> dequantized(static_cast<std::size_t>(cols_));
  for (int i = 0; i < count; ++i) {
    if (round_trip[static_cast<std::size_t>(i)] == 0) continue;
    const std::int8_t* row = values + static_cast<long>(i) * cols_;
    for (int c = 0; c < cols_; ++c) dequantized[c] = scales[i] * static_cast<float>(row[c]);
    quantize(first + i, dequantized.data(), 1);
  }
}

std::shared_ptr<const Int8Weights> Int8Weights::quantize(const float* weights, int rows, int cols) {
  check_not_empty(rows, cols);
  QuantizedRows quantized(rows, cols);
  quantized.quantize(0, weights, rows);
  return from_rows(std::move(quantized));
}

std::shared_ptr<const Int8Weights> Int8Weights::from_rows(QuantizedRows rows,
                                                          std::vector<std::int8_t>* spare) {
  check_not_empty(rows.rows(), rows.cols());
  std::shared_ptr<Int8Weights> out(new Int8Weights());
  out->rows_ = rows.rows_;
  out->cols_ = rows.cols_;
  out->block_columns_ = packed_block_columns(rows.rows_);
  out->scales_ = std::move(rows.scales_);
  out->row_sums_ = std::move(rows.row_sums_);
  out->products_ = int8_products(rows.values_, out->rows_, out->cols_, out->block_columns_);
  if (spare != nullptr && !rows.values_.empty()) *spare = std::move(rows.values_);  // packed
  return out;
}

bool Int8Weights::packed() const { return products_->packed(); }

std::size_t Int8Weights::bytes() const {
  return products_->bytes() + scales_.size() * sizeof(float) +
         row_sums_.size() * sizeof(std::int32_t);
}

std::vector<std::int8_t> Int8Weights::unpacked_values() const {
  // The sums of the identity [cols, cols] are qw transposed: sums[i, j] = qw[first + j, i].
  std::vector<std::uint8_t> identity(static_cast<std::size_t>(cols_) * cols_, 0);
  for (int i = 0; i < cols_; ++i) identity[static_cast<std::size_t>(i) * cols_ + i] = 1;
  std::vector<std::int32_t> sums(static_cast<std::size_t>(cols_) * block_columns_);
  std::vector<std::int8_t> values(static_cast<std::size_t>(rows_) * cols_);
  for (int b = 0; b < column_blocks(); ++b) {
    const BlockRange range = block_range(b, 1, block_columns_, rows_);
    products_->run(identity.data(), cols_, range, sums.data());
    for (int i = 0; i < cols_; ++i) {
      for (int j = 0; j < range.count; ++j) {
        values[static_cast<std::size_t>(range.first + j) * cols_ + i] =
            static_cast<std::int8_t>(sums[static_cast<std::size_t>(i) * range.count + j]);
      }
    }
  }
  return values;
}

void quantize_rows_cpu(const float* x, int rows, int cols, std::uint8_t* q, float* scales) {
  parallel_for(rows, 16, [&](long first, long last) {
    quantize_rows(x + first * cols, static_cast<int>(last - first), cols, q + first * cols,
                  scales + first);
  });
}

namespace {

// y[rows, range] = act(row_scale * weight_scale * (sum - zero_point * row_sum) + bias) from one
// column block's sums [rows, range.count]; `rows` start at output row m0.
void dequantize_block(const Int8LinearArgs& args, const std::int32_t* sums, const float* row_scales,
                      long m0, int rows, BlockRange range) {
  const Int8Weights& weights = *args.weights;
  const int n = weights.rows();
  const int zero_point = int8_activation_levels().zero_point;
  for (int r = 0; r < rows; ++r) {
    float* y = args.output + (m0 + r) * n + range.first;
    dequantize_row(sums + static_cast<long>(r) * range.count, range.count, zero_point,
                   row_scales[r], weights.scales() + range.first, weights.row_sums() + range.first,
                   args.bias != nullptr ? args.bias + range.first : nullptr, y);
    if (args.activation != ActivationKind::kIdentity) {
      // Serial: inside a part.
      bias_activation_cpu(y, nullptr, 1, range.count, range.count, args.activation);
    }
  }
}

}  // namespace

void int8_linear_cpu(const Int8LinearArgs& args) {
  const Int8Weights& weights = *args.weights;
  const int m = args.rows;
  const int k = weights.cols();
  if (m == 0) return;

  // One thread's part, rows [m0, m1) x column blocks [b0, b1): its rows quantized once (a part
  // split by columns quantizes all of them again: M x K against M x N x K / threads of
  // products), then call by call the integer sums, dequantized while they are in cache.
  auto part = [&](long m0, long m1, long b0, long b1) {
    const int rows = static_cast<int>(m1 - m0);
    const int blocks_per_call =
        static_cast<int>(std::min<long>(weights.products().blocks_per_call(), b1 - b0));
    // Rows in chunks whose sums stay in cache until they are dequantized.
    const int widest = blocks_per_call * weights.block_columns();
    const int chunk = std::min(rows, std::max(4, kSumsInCache / widest));
    BlockBuffers& buffers = thread_buffers(rows, chunk, widest, k);
    quantize_rows(args.input + m0 * k, rows, k, buffers.quantized.data(),
                  buffers.row_scales.data());
    for (int b = static_cast<int>(b0); b < b1; b += blocks_per_call) {
      const BlockRange columns = block_range(b, std::min<int>(blocks_per_call, b1 - b),
                                             weights.block_columns(), weights.rows());
      for (int r0 = 0; r0 < rows; r0 += chunk) {
        const int count = std::min(chunk, rows - r0);
        weights.products().run(buffers.quantized.data() + static_cast<long>(r0) * k, count, columns,
                               buffers.sums.data());
        dequantize_block(args, buffers.sums.data(), buffers.row_scales.data() + r0, m0 + r0, count,
                         columns);
      }
    }
  };
  parallel_gemm_column_blocks(m, weights.rows(), k, weights.block_columns(), part);
}

}  // namespace rpt::kernels
