#include "kernels/cpu/int8_products_cpu.h"

#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <string_view>

#include "kernels/cpu/onednn_cpu.h"
#include "kernels/errors.h"
#include "kernels/parallel.h"

namespace rpt::kernels {
namespace {

using dnnl::memory;
using DataType = memory::data_type;
using Tag = memory::format_tag;

dnnl::stream& thread_stream() {
  use_one_openmp_thread();
  thread_local dnnl::stream stream(onednn_cpu_engine());
  return stream;
}

// oneDNN's packed int8 GEMM (kernels/cpu/onednn_cpu.h) with A s8, B u8, C s32.
using Int8Compute = dnnl_status_t (*)(const char* transa, const char* transb, const char* offsetc,
                                      const dnnl_dim_t* m, const dnnl_dim_t* n, const dnnl_dim_t* k,
                                      const std::int8_t* a, const dnnl_dim_t* lda,
                                      const std::uint8_t* b, const dnnl_dim_t* ldb,
                                      const float* beta, std::int32_t* c, const dnnl_dim_t* ldc,
                                      const std::int32_t* co);
using PackedGemmApi = PackedGemmFunctions<void, void, Int8Compute>;

const PackedGemmApi* packed_gemm_api() {
  return PackedGemmApi::find(
      "_ZN4dnnl4impl3cpu26gemm_s8u8s32_pack_get_sizeEPKcS3_S3_PKlS5_S5_S5_S5_PmPb",
      "_ZN4dnnl4impl3cpu17gemm_s8u8s32_packEPKcS3_S3_PKlS5_S5_S5_S5_PKvPv",
      "_ZN4dnnl4impl3cpu20gemm_s8u8s32_computeEPKcS3_S3_PKlS5_S5_PKaS5_PKhS5_PKfPiS5_PKi");
}

// RPT_INT8_PACKED: 0 keeps every matrix plain, 1 packs every matrix, else a matrix is packed
// when its layout spans little more than its values. Read at each quantization, so that one
// process (a test) can hold every kind.
enum class Packing { kWhenSmall, kAlways, kNever };

Packing packing_setting() {
  const char* setting = std::getenv("RPT_INT8_PACKED");
  const std::string_view value = setting != nullptr ? setting : "";
  return value == "0" ? Packing::kNever : value == "1" ? Packing::kAlways : Packing::kWhenSmall;
}

}  // namespace

BlockRange block_range(int first_block, int blocks, int block_columns, int n) {
  const int first = first_block * block_columns;
  return {first_block, first, std::min(blocks * block_columns, n - first)};
}

namespace {

// Rows the layout is asked for; it does not depend on them (kernels/int8_gemm_test.cc).
constexpr dnnl_dim_t kPackingRows = 128;

// Where each column block of qw [n, k] starts in one packed buffer, the buffer's size last.
std::vector<std::size_t> packed_block_offsets(const PackedGemmApi& api, int n, int k,
                                              int block_columns) {
  return PackedBlockBuffer::offsets(n, block_columns, [&](int columns) {
    return api.packed_bytes(columns, k, kPackingRows, "int8");
  });
}

// qw block by block in oneDNN's packed layout, each block packed alone.
class PackedProducts final : public Int8Weights::Products {
 public:
  PackedProducts(const PackedGemmApi& api, const std::int8_t* values,  // [n, k]
                 int n, int k, int block_columns,
                 std::vector<std::size_t> offsets)  // packed_block_offsets
      : api_(api), k_(k), blocks_(std::move(offsets)) {
    // Blocks are packed alone, so in parallel: the same bytes whichever thread packs a block.
    parallel_for(blocks_.blocks(), 1, [&](long begin, long end) {
      const OneOpenMpThread one_thread;
      for (long b = begin; b < end; ++b) {
        pack(values, block_range(static_cast<int>(b), 1, block_columns, n));
      }
    });
    resident_bytes_ = blocks_.resident_bytes();
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
  // The pages packing wrote: the layout's padding is never resident (PackedBlockBuffer).
  std::size_t bytes() const override { return resident_bytes_; }

 private:
  std::int8_t* block_data(int block) const {
    return reinterpret_cast<std::int8_t*>(blocks_.block(block));
  }

  void pack(const std::int8_t* values, BlockRange columns) {
    api_.pack_block(values + static_cast<long>(columns.first) * k_, columns.count, k_, kPackingRows,
                    block_data(columns.first_block), "int8");
  }

  const PackedGemmApi& api_;
  int k_;
  PackedBlockBuffer blocks_;
  std::size_t resident_bytes_ = 0;
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
                                                  onednn_cpu_engine());
    RPT_CHECK(descriptor.scratchpad_desc().get_size() == 0, InvalidArgument,
              "oneDNN's int8 matmul asks for a scratchpad; rpt does not provide one");
    matmul_ = dnnl::matmul(descriptor);
  }

  // A thread's whole share in one call: each call pays oneDNN's setup (measured:
  // docs/PERFORMANCE.md "rpt vs CTranslate2 after the unpadded encoder").
  int blocks_per_call() const override { return std::numeric_limits<int>::max(); }

  void run(const std::uint8_t* input, int rows, BlockRange columns,
           std::int32_t* sums) const override {
    const memory src({{rows, k_}, DataType::u8, Tag::ab}, onednn_cpu_engine(),
                     const_cast<std::uint8_t*>(input));
    const memory wei(
        {{k_, columns.count}, DataType::s8, Tag::ba}, onednn_cpu_engine(),
        const_cast<std::int8_t*>(values_.data() + static_cast<long>(columns.first) * k_));
    const memory dst({{rows, columns.count}, DataType::s32, Tag::ab}, onednn_cpu_engine(), sums);
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

}  // namespace

std::unique_ptr<const Int8Weights::Products> int8_products(std::vector<std::int8_t>& values, int n,
                                                           int k, int block_columns) {
  const Packing packing = packing_setting();
  const PackedGemmApi* api = packed_gemm_api();
  if (api != nullptr && packing != Packing::kNever) {
    std::vector<std::size_t> offsets = packed_block_offsets(*api, n, k, block_columns);
    if (packing == Packing::kAlways || offsets.back() <= values.size() * 3 / 2) {
      return std::make_unique<PackedProducts>(*api, values.data(), n, k, block_columns,
                                              std::move(offsets));
    }
  }
  return std::make_unique<MatmulProducts>(std::move(values), k);
}

}  // namespace rpt::kernels

namespace rpt::kernels {
namespace {

// Whether oneDNN's u8 x s8 int8 kernels on this ISA sum into int32 without a saturating int16
// step (VNNI's vpdpbusd): exact for avx2_vnni, avx512_core_vnni and avx512_core_amx, saturating
// for avx512_core and avx2 (how that was established: docs/engine.md "CPU and CUDA", int8 on the
// CPU). avx512_core_bf16 lies between two exact ones and uses the same kernels.
bool exact_u8s8_sums(dnnl::cpu_isa isa) {
  switch (isa) {
    case dnnl::cpu_isa::avx2_vnni:
    case dnnl::cpu_isa::avx512_core_vnni:
    case dnnl::cpu_isa::avx512_core_bf16:
    case dnnl::cpu_isa::avx512_core_amx:
      return true;
    default:
      return false;
  }
}

}  // namespace

ActivationLevels choose_activation_levels(bool exact_sums, const char* setting) {
  const std::string value = setting != nullptr ? setting : "";
  if (value.empty() || value == "8") return exact_sums ? k8BitActivations : k7BitActivations;
  if (value == "7") return k7BitActivations;
  if (value == "8-unchecked") return k8BitActivations;
  RPT_THROW(InvalidArgument, "RPT_INT8_ACTIVATION_BITS must be 7, 8 or 8-unchecked, got '", value,
            "'");
}

const ActivationLevels& int8_activation_levels() {
  static const ActivationLevels levels = choose_activation_levels(
      exact_u8s8_sums(dnnl::get_effective_cpu_isa()), std::getenv("RPT_INT8_ACTIVATION_BITS"));
  return levels;
}

std::string int8_products_description() {
  const bool packs = packed_gemm_api() != nullptr && packing_setting() != Packing::kNever;
  return onednn_version_name() + (packs ? " packed " : " matmul ") + onednn_isa_name() + ", " +
         std::to_string(int8_activation_levels().bits()) + "-bit activations";
}

}  // namespace rpt::kernels
