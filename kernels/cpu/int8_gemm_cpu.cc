#include <dlfcn.h>
#include <omp.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <string_view>

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
void use_one_openmp_thread() {
  thread_local const bool single_threaded = [] {
    omp_set_num_threads(1);
    return true;
  }();
  (void)single_threaded;
}

dnnl::stream& thread_stream() {
  use_one_openmp_thread();
  thread_local dnnl::stream stream(cpu_engine());
  return stream;
}

// What one thread's part needs, reused across calls: quantized rows, their scales, one column
// block's sums.
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

// oneDNN's packed int8 GEMM (dnnl::impl::cpu, src/cpu/gemm/gemm_pack.hpp in oneDNN's sources):
// column-major like BLAS, C[M, N] = A[M, K] B[K, N] with A s8, B u8, C s32.
struct PackedGemmApi {
  using GetSize = dnnl_status_t (*)(const char* identifier, const char* transa, const char* transb,
                                    const dnnl_dim_t* m, const dnnl_dim_t* n, const dnnl_dim_t* k,
                                    const dnnl_dim_t* lda, const dnnl_dim_t* ldb, std::size_t* size,
                                    bool* pack);
  using Pack = dnnl_status_t (*)(const char* identifier, const char* transa, const char* transb,
                                 const dnnl_dim_t* m, const dnnl_dim_t* n, const dnnl_dim_t* k,
                                 const dnnl_dim_t* lda, const dnnl_dim_t* ldb, const void* src,
                                 void* dst);
  using Compute = dnnl_status_t (*)(const char* transa, const char* transb, const char* offsetc,
                                    const dnnl_dim_t* m, const dnnl_dim_t* n, const dnnl_dim_t* k,
                                    const std::int8_t* a, const dnnl_dim_t* lda,
                                    const std::uint8_t* b, const dnnl_dim_t* ldb, const float* beta,
                                    std::int32_t* c, const dnnl_dim_t* ldc, const std::int32_t* co);
  GetSize get_size;
  Pack pack;
  Compute compute;
};

// The functions of libdnnl.so.2, looked up once by their mangled names (which spell the
// parameter types: a oneDNN whose signatures differ has none of them); nullptr when any is
// missing.
const PackedGemmApi* packed_gemm_api() {
  static const std::optional<PackedGemmApi> api = []() -> std::optional<PackedGemmApi> {
    void* get_size = dlsym(
        RTLD_DEFAULT, "_ZN4dnnl4impl3cpu26gemm_s8u8s32_pack_get_sizeEPKcS3_S3_PKlS5_S5_S5_S5_PmPb");
    void* pack =
        dlsym(RTLD_DEFAULT, "_ZN4dnnl4impl3cpu17gemm_s8u8s32_packEPKcS3_S3_PKlS5_S5_S5_S5_PKvPv");
    void* compute =
        dlsym(RTLD_DEFAULT,
              "_ZN4dnnl4impl3cpu20gemm_s8u8s32_computeEPKcS3_S3_PKlS5_S5_PKaS5_PKhS5_PKfPiS5_PKi");
    if (get_size == nullptr || pack == nullptr || compute == nullptr) return std::nullopt;
    return PackedGemmApi{reinterpret_cast<PackedGemmApi::GetSize>(get_size),
                         reinterpret_cast<PackedGemmApi::Pack>(pack),
                         reinterpret_cast<PackedGemmApi::Compute>(compute)};
  }();
  return api ? &*api : nullptr;
}

// RPT_INT8_PACKED: 0 keeps every matrix plain, 1 packs every matrix, else a matrix is packed
// when that costs little memory. Read at each quantization, so that one process (a test) can
// hold every kind.
enum class Packing { kWhenSmall, kAlways, kNever };

Packing packing_setting() {
  const char* setting = std::getenv("RPT_INT8_PACKED");
  const std::string_view value = setting != nullptr ? setting : "";
  return value == "0" ? Packing::kNever : value == "1" ? Packing::kAlways : Packing::kWhenSmall;
}

// Runs a scope with oneDNN's OpenMP limited to one thread: packed data is laid out for the
// threads that pack it (oneDNN splits it per thread), and rpt's calls are single-threaded.
class OneOpenMpThread {
 public:
  OneOpenMpThread() : previous_(omp_get_max_threads()) { omp_set_num_threads(1); }
  ~OneOpenMpThread() { omp_set_num_threads(previous_); }
  OneOpenMpThread(const OneOpenMpThread&) = delete;
  OneOpenMpThread& operator=(const OneOpenMpThread&) = delete;

 private:
  int previous_;
};

// Output features per product call, measured with gemm_bench's int8 shapes (AVX2 EPYC): on one
// thread 256 and 512 are within 7% of each other and 3 to 12% faster than 128; on two, 256
// splits the demo models' widths (768, 1024, 8000) into even shares where 512 does not; oneDNN's
// layout adds 19% to the values' bytes at 256 (38% at 128); a block's sums at 128 rows (a
// decoder step of 32 sentences at beam 4) take 128 KiB, a quarter of that CPU's L2.
constexpr int kBlockColumns = 256;

// Column blocks [first_block, first_block + blocks) of an n-wide matrix: the columns
// [first, first + count).
struct BlockRange {
  int first_block;
  int first;
  int count;
};

BlockRange block_range(int first_block, int blocks, int block_columns, int n) {
  const int first = first_block * block_columns;
  return {first_block, first, std::min(blocks * block_columns, n - first)};
}

}  // namespace

// The integer sums of consecutive column blocks, at most blocks_per_call() of them:
// sums[r, j] = input[r, :] . qw[columns.first + j, :].
struct Int8Weights::Products {
  virtual ~Products() = default;
  virtual int blocks_per_call() const = 0;
  virtual void run(const std::uint8_t* input,  // [rows, k]
                   int rows, BlockRange columns,
                   std::int32_t* sums) const = 0;  // [rows, columns.count]
  virtual bool packed() const = 0;
  virtual std::size_t bytes() const = 0;
};

namespace {

constexpr std::size_t kPackAlignment = 4096;  // oneDNN aligns to 4 KiB inside a packed block
// Rows the layout is asked for; it does not depend on them (kernels/int8_gemm_test.cc).
constexpr dnnl_dim_t kPackingRows = 128;

std::size_t round_up(std::size_t size, std::size_t multiple) {
  return (size + multiple - 1) / multiple * multiple;
}

std::size_t packed_block_bytes(const PackedGemmApi& api, int columns, int k) {
  const dnnl_dim_t m = columns, n = kPackingRows, depth = k;
  std::size_t size = 0;
  bool worth_packing = false;
  const dnnl_status_t status =
      api.get_size("A", "T", "N", &m, &n, &depth, &depth, &depth, &size, &worth_packing);
  RPT_CHECK(status == dnnl_success, RuntimeFailure, "oneDNN cannot size a packed ", columns, " x ",
            k, " int8 block (status ", static_cast<int>(status), ")");
  return size;
}

// Where each column block of qw [n, k] starts in one packed buffer, the buffer's size last.
std::vector<std::size_t> packed_block_offsets(const PackedGemmApi& api, int n, int k,
                                              int block_columns) {
  const OneOpenMpThread one_thread;
  std::vector<std::size_t> offsets{0};
  for (int first = 0; first < n; first += block_columns) {
    const int columns = std::min(block_columns, n - first);
    offsets.push_back(offsets.back() +
                      round_up(packed_block_bytes(api, columns, k), kPackAlignment));
  }
  return offsets;
}

// qw block by block in oneDNN's packed layout, each block packed alone at a 4 KiB boundary of
// one buffer.
class PackedProducts final : public Int8Weights::Products {
 public:
  PackedProducts(const PackedGemmApi& api, const std::int8_t* values,  // [n, k]
                 int n, int k, int block_columns,
                 std::vector<std::size_t> offsets)  // packed_block_offsets
      : api_(api), k_(k), offsets_(std::move(offsets)) {
    storage_.reset(static_cast<std::byte*>(
        ::operator new[](offsets_.back(), std::align_val_t{kPackAlignment})));
    std::memset(storage_.get(), 0, offsets_.back());
    const OneOpenMpThread one_thread;
    for (int b = 0; b + 1 < static_cast<int>(offsets_.size()); ++b) {
      pack(values, block_range(b, 1, block_columns, n));
    }
  }

  int blocks_per_call() const override { return 1; }  // each block is packed alone

  // C = qw_block [columns, k] x input^T [k, rows] in column-major terms is sums [rows, columns].
  void run(const std::uint8_t* input, int rows, BlockRange columns,
           std::int32_t* sums) const override {
    use_one_openmp_thread();
    const dnnl_dim_t m = columns.count, n = rows, k = k_;
    const float beta = 0.0f;
    const std::int32_t no_offset = 0;
    const dnnl_status_t status =
        api_.compute("P", "N", "F", &m, &n, &k, block_data(columns.first_block), &k, input, &k,
                     &beta, sums, &m, &no_offset);
    RPT_CHECK(status == dnnl_success, RuntimeFailure, "oneDNN's packed int8 GEMM failed (status ",
              static_cast<int>(status), ")");
  }

  bool packed() const override { return true; }
  std::size_t bytes() const override { return offsets_.back(); }

 private:
  std::int8_t* block_data(int block) const {
    return reinterpret_cast<std::int8_t*>(storage_.get() +
                                          offsets_[static_cast<std::size_t>(block)]);
  }

  void pack(const std::int8_t* values, BlockRange columns) {
    const dnnl_dim_t m = columns.count, n = kPackingRows, k = k_;
    const dnnl_status_t status =
        api_.pack("A", "T", "N", &m, &n, &k, &k, &k,
                  values + static_cast<long>(columns.first) * k_, block_data(columns.first_block));
    RPT_CHECK(status == dnnl_success, RuntimeFailure, "oneDNN cannot pack a ", columns.count,
              " x ", k_, " int8 block (status ", static_cast<int>(status), ")");
  }

  struct AlignedDelete {
    void operator()(std::byte* bytes) const {
      ::operator delete[](bytes, std::align_val_t{kPackAlignment});
    }
  };

  const PackedGemmApi& api_;
  int k_;
  std::vector<std::size_t> offsets_;  // [blocks + 1]
  std::unique_ptr<std::byte[], AlignedDelete> storage_;
};

// The fallback: qw [n, k] as it is, through a u8 [m, k] x s8 [k, n] -> s32 [m, n] matmul with m
// and n given at run time (one primitive serves every call of every thread). oneDNN copies the
// weights into its GEMM layout on every call.
class MatmulProducts final : public Int8Weights::Products {
 public:
  MatmulProducts(std::vector<std::int8_t> values, int k)  // values [n, k]
      : values_(std::move(values)), k_(k) {
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
    matmul_ = dnnl::matmul(descriptor);
  }

  // A thread's whole share in one call: each call pays oneDNN's setup, some 2 µs (measured: in
  // 256-column calls, 4 rows x 8000 columns took 1.4 times as long).
  int blocks_per_call() const override { return std::numeric_limits<int>::max(); }

  void run(const std::uint8_t* input, int rows, BlockRange columns,
           std::int32_t* sums) const override {
    const memory src({{rows, k_}, DataType::u8, Tag::ab}, cpu_engine(),
                     const_cast<std::uint8_t*>(input));
    const memory wei(
        {{k_, columns.count}, DataType::s8, Tag::ba}, cpu_engine(),
        const_cast<std::int8_t*>(values_.data() + static_cast<long>(columns.first) * k_));
    const memory dst({{rows, columns.count}, DataType::s32, Tag::ab}, cpu_engine(), sums);
    dnnl::stream& stream = thread_stream();
    matmul_.execute(stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}});
    stream.wait();
  }

  bool packed() const override { return false; }
  std::size_t bytes() const override { return values_.size(); }

 private:
  std::vector<std::int8_t> values_;  // [n, k]
  int k_;
  dnnl::matmul matmul_;
};

// qw [rows, cols] with one scale per row and the rows' sums.
struct QuantizedMatrix {
  std::vector<std::int8_t> values;     // [rows, cols]
  std::vector<float> scales;           // [rows]
  std::vector<std::int32_t> row_sums;  // [rows]
};

QuantizedMatrix quantize_matrix(const float* weights, int rows, int cols) {
  QuantizedMatrix out{std::vector<std::int8_t>(static_cast<std::size_t>(rows) * cols),
                      std::vector<float>(static_cast<std::size_t>(rows)),
                      std::vector<std::int32_t>(static_cast<std::size_t>(rows))};
  for (int r = 0; r < rows; ++r) {
    const float* row = weights + static_cast<long>(r) * cols;
    float largest = 0.0f;
    for (int c = 0; c < cols; ++c) {
      RPT_CHECK(std::isfinite(row[c]), InvalidArgument, "weight row ", r, " holds ", row[c],
                ", which int8 cannot represent");
      largest = std::max(largest, std::fabs(row[c]));
    }
    const float inverse = largest > 0.0f ? kWeightLevels / largest : 0.0f;
    std::int8_t* q = out.values.data() + static_cast<long>(r) * cols;
    std::int32_t sum = 0;
    for (int c = 0; c < cols; ++c) {
      q[c] = static_cast<std::int8_t>(std::lrint(row[c] * inverse));
      sum += q[c];
    }
    out.scales[static_cast<std::size_t>(r)] = largest / kWeightLevels;
    out.row_sums[static_cast<std::size_t>(r)] = sum;
  }
  return out;
}

// Packed when oneDNN can and packing adds at most a quarter to the values' bytes (the layout
// spends some 12 KiB a block on headers and alignment: small matrices, whose products cost
// little, stay plain), unless RPT_INT8_PACKED says otherwise. values: qw [n, k].
std::unique_ptr<const Int8Weights::Products> products_for(std::vector<std::int8_t> values, int n,
                                                          int k, int block_columns) {
  const Packing packing = packing_setting();
  const PackedGemmApi* api = packed_gemm_api();
  if (api != nullptr && packing != Packing::kNever) {
    std::vector<std::size_t> offsets = packed_block_offsets(*api, n, k, block_columns);
    if (packing == Packing::kAlways || offsets.back() <= values.size() * 5 / 4) {
      return std::make_unique<PackedProducts>(*api, values.data(), n, k, block_columns,
                                              std::move(offsets));
    }
  }
  return std::make_unique<MatmulProducts>(std::move(values), k);
}

}  // namespace

Int8Weights::~Int8Weights() = default;

std::shared_ptr<const Int8Weights> Int8Weights::quantize(const float* weights, int rows, int cols) {
  RPT_CHECK(rows > 0 && cols > 0, InvalidArgument, "int8 weights need a non-empty matrix, got ",
            rows, " x ", cols);
  QuantizedMatrix quantized = quantize_matrix(weights, rows, cols);
  std::shared_ptr<Int8Weights> out(new Int8Weights());
  out->rows_ = rows;
  out->cols_ = cols;
  out->block_columns_ = kBlockColumns;
  out->scales_ = std::move(quantized.scales);
  out->row_sums_ = std::move(quantized.row_sums);
  out->products_ = products_for(std::move(quantized.values), rows, cols, out->block_columns_);
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
void dequantize_block(const Int8LinearArgs& args, const BlockBuffers& buffers, long m0, int rows,
                      BlockRange range) {
  const Int8Weights& weights = *args.weights;
  const int n = weights.rows();
  for (int r = 0; r < rows; ++r) {
    float* y = args.output + (m0 + r) * n + range.first;
    dequantize_row(buffers.sums.data() + static_cast<long>(r) * range.count, range.count,
                   buffers.row_scales[static_cast<std::size_t>(r)], weights.scales() + range.first,
                   weights.row_sums() + range.first,
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
    BlockBuffers& buffers = thread_buffers(rows, blocks_per_call * weights.block_columns(), k);
    quantize_rows(args.input + m0 * k, rows, k, buffers.quantized.data(),
                  buffers.row_scales.data());
    for (int b = static_cast<int>(b0); b < b1; b += blocks_per_call) {
      const BlockRange columns = block_range(b, std::min<int>(blocks_per_call, b1 - b),
                                             weights.block_columns(), weights.rows());
      weights.products().run(buffers.quantized.data(), rows, columns, buffers.sums.data());
      dequantize_block(args, buffers, m0, rows, columns);
    }
  };
  parallel_gemm_column_blocks(m, weights.rows(), k, weights.block_columns(), part);
}

}  // namespace rpt::kernels
