#include <omp.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <oneapi/dnnl/dnnl.hpp>
#include <limits>

#include "kernels/cpu/vector_clones.h"
#include "kernels/errors.h"
#include "kernels/int8_gemm.h"
#include "kernels/parallel.h"

namespace rpt::kernels {
namespace {

using dnnl::memory;
using DataType = memory::data_type;
using Tag = memory::format_tag;

const dnnl::engine& cpu_engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// Each rpt thread calls oneDNN single-threaded on its own chunk (kernels/parallel.h): oneDNN's
// OpenMP team would otherwise start on every pool thread and oversubscribe the cores.
dnnl::stream& thread_stream() {
  thread_local const bool single_threaded = [] {
    omp_set_num_threads(1);
    return true;
  }();
  (void)single_threaded;
  thread_local dnnl::stream stream(cpu_engine());
  return stream;
}

// What one thread's block needs, reused across calls: quantized rows, their scales, the sums.
struct BlockBuffers {
  std::vector<std::uint8_t> quantized;  // [rows, k]
  std::vector<float> row_scales;        // [rows]
  std::vector<std::int32_t> sums;       // [rows, cols]
};

BlockBuffers& thread_buffers(int rows, int cols, int k) {
  thread_local BlockBuffers buffers;
  const auto grow = [](auto& buffer, long size) {
    if (static_cast<long>(buffer.size()) < size) buffer.resize(static_cast<std::size_t>(size));
  };
  grow(buffers.quantized, static_cast<long>(rows) * k);
  grow(buffers.row_scales, rows);
  grow(buffers.sums, static_cast<long>(rows) * cols);
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

// out = round(x * inverse) + zero point, with x * inverse in [-kInputLevels, kInputLevels]:
// adding the zero point and 0.5 first makes the value positive, so truncation rounds (halves
// up) and the loop vectorises.
RPT_VECTOR_CLONES void quantize_row(const float* x, int count, float inverse, std::uint8_t* out) {
  constexpr float kOffset = static_cast<float>(kInputZeroPoint) + 0.5f;
  for (int i = 0; i < count; ++i) {
    out[i] = static_cast<std::uint8_t>(static_cast<int>(x[i] * inverse + kOffset));
  }
}

// Serial per-row quantization of `rows` rows (quantize_rows_cpu splits it over threads).
void quantize_rows(const float* x, int rows, int cols, std::uint8_t* q, float* scales) {
  for (int r = 0; r < rows; ++r) {
    const float* row = x + static_cast<long>(r) * cols;
    std::uint8_t* out = q + static_cast<long>(r) * cols;
    const std::uint32_t largest_bits = max_magnitude_bits(row, cols);
    if (largest_bits >= kNonFiniteBits) {
      // No int8 image: the row's outputs go NaN, as they would in float32, so the beam search
      // sees it.
      std::fill(out, out + cols, static_cast<std::uint8_t>(kInputZeroPoint));
      scales[r] = std::numeric_limits<float>::quiet_NaN();
      continue;
    }
    const float largest = std::bit_cast<float>(largest_bits);
    quantize_row(row, cols, largest > 0.0f ? kInputLevels / largest : 0.0f, out);
    scales[r] = largest / kInputLevels;
  }
}

// y = row_scale * weight_scale * (sum - zero_point * row_sum) + bias, for one row.
RPT_VECTOR_CLONES void dequantize_row(const std::int32_t* sums, int count, float row_scale,
                                      const float* weight_scales, const std::int32_t* row_sums,
                                      const float* bias, float* y) {
  for (int i = 0; i < count; ++i) {
    const auto product = static_cast<float>(sums[i] - kInputZeroPoint * row_sums[i]);
    y[i] = product * row_scale * weight_scales[i] + (bias != nullptr ? bias[i] : 0.0f);
  }
}

}  // namespace

// u8 [m, k] x s8 [k, n] -> s32 [m, n] with m and n given at run time: one primitive serves
// every chunk of every call for this matrix. The weights stay in their plain [n, k] layout,
// which is what oneDNN 2.6 picks for `any` on AVX2 (measured: same size, no blocking).
struct Int8Weights::Primitive {
  explicit Primitive(int k) {
    const memory::dim runtime = DNNL_RUNTIME_DIM_VAL;
    const memory::desc src({runtime, k}, DataType::u8, Tag::ab);
    const memory::desc weights({k, runtime}, DataType::s8, Tag::ba);
    const memory::desc dst({runtime, runtime}, DataType::s32, Tag::ab);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    const dnnl::matmul::primitive_desc descriptor(dnnl::matmul::desc(src, weights, dst), attr,
                                                  cpu_engine());
    RPT_CHECK(descriptor.scratchpad_desc().get_size() == 0, InvalidArgument,
              "oneDNN's int8 matmul asks for a scratchpad; rpt does not provide one");
    matmul = dnnl::matmul(descriptor);
  }

  // sums[m, n] = input[m, :] . weights[n, :] over k.
  void run(const std::uint8_t* input, int m, const std::int8_t* weights, int n, int k,
           std::int32_t* sums) const {
    const memory src({{m, k}, DataType::u8, Tag::ab}, cpu_engine(),
                     const_cast<std::uint8_t*>(input));
    const memory wei({{k, n}, DataType::s8, Tag::ba}, cpu_engine(),
                     const_cast<std::int8_t*>(weights));
    const memory dst({{m, n}, DataType::s32, Tag::ab}, cpu_engine(), sums);
    dnnl::stream& stream = thread_stream();
    matmul.execute(stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}});
    stream.wait();
  }

  dnnl::matmul matmul;
};

Int8Weights::~Int8Weights() = default;

std::shared_ptr<const Int8Weights> Int8Weights::quantize(const float* weights, int rows,
                                                         int cols) {
  RPT_CHECK(rows > 0 && cols > 0, InvalidArgument, "int8 weights need a non-empty matrix, got ",
            rows, " x ", cols);
  std::shared_ptr<Int8Weights> out(new Int8Weights());
  out->rows_ = rows;
  out->cols_ = cols;
  out->values_.resize(static_cast<std::size_t>(rows) * cols);
  out->scales_.resize(static_cast<std::size_t>(rows));
  out->row_sums_.resize(static_cast<std::size_t>(rows));
  for (int r = 0; r < rows; ++r) {
    const float* row = weights + static_cast<long>(r) * cols;
    float largest = 0.0f;
    for (int c = 0; c < cols; ++c) {
      RPT_CHECK(std::isfinite(row[c]), InvalidArgument, "weight row ", r, " holds ", row[c],
                ", which int8 cannot represent");
      largest = std::max(largest, std::fabs(row[c]));
    }
    const float scale = largest / kWeightLevels;
    const float inverse = largest > 0.0f ? kWeightLevels / largest : 0.0f;
    std::int8_t* q = out->values_.data() + static_cast<long>(r) * cols;
    std::int32_t sum = 0;
    for (int c = 0; c < cols; ++c) {
      q[c] = static_cast<std::int8_t>(std::lrint(row[c] * inverse));
      sum += q[c];
    }
    out->scales_[static_cast<std::size_t>(r)] = scale;
    out->row_sums_[static_cast<std::size_t>(r)] = sum;
  }
  out->primitive_ = std::make_unique<Primitive>(cols);
  return out;
}

std::size_t Int8Weights::bytes() const {
  return values_.size() + scales_.size() * sizeof(float) + row_sums_.size() * sizeof(std::int32_t);
}

void quantize_rows_cpu(const float* x, int rows, int cols, std::uint8_t* q, float* scales) {
  parallel_for(rows, 16, [&](long first, long last) {
    quantize_rows(x + first * cols, static_cast<int>(last - first), cols, q + first * cols,
                  scales + first);
  });
}

void int8_linear_cpu(const Int8LinearArgs& args) {
  const Int8Weights& weights = *args.weights;
  const int m = args.rows;
  const int n = weights.rows();
  const int k = weights.cols();
  if (m == 0) return;

  // One block of rows [m0, m1) x output features [n0, n1), all on one thread: quantize its rows
  // (a block split by columns quantizes all of them again: M x K against M x N x K / threads of
  // products, and one parallel region less per layer), integer products, then
  // y = act(row_scale * weight_scale * (sum - zero_point * row_sum) + bias).
  auto block = [&](long m0, long m1, long n0, long n1) {
    const int rows = static_cast<int>(m1 - m0);
    const int cols = static_cast<int>(n1 - n0);
    BlockBuffers& buffers = thread_buffers(rows, cols, k);
    quantize_rows(args.input + m0 * k, rows, k, buffers.quantized.data(),
                  buffers.row_scales.data());
    weights.primitive().run(buffers.quantized.data(), rows, weights.values() + n0 * k, cols, k,
                            buffers.sums.data());
    for (int r = 0; r < rows; ++r) {
      float* y = args.output + (m0 + r) * n + n0;
      dequantize_row(buffers.sums.data() + static_cast<long>(r) * cols, cols,
                     buffers.row_scales[static_cast<std::size_t>(r)], weights.scales() + n0,
                     weights.row_sums() + n0, args.bias != nullptr ? args.bias + n0 : nullptr, y);
      if (args.activation != ActivationKind::kIdentity) {
        bias_activation_cpu(y, nullptr, 1, cols, cols, args.activation);  // serial: inside a chunk
      }
    }
  };
  parallel_gemm_blocks(m, n, k, block);
}

}  // namespace rpt::kernels
