#include "kernels/cpu/int8_products_cpu.h"

#include <dlfcn.h>
#include <omp.h>

#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <string_view>

#include "kernels/errors.h"

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

}  // namespace

BlockRange block_range(int first_block, int blocks, int block_columns, int n) {
  const int first = first_block * block_columns;
  return {first_block, first, std::min(blocks * block_columns, n - first)};
}

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
        api_.pack("A", "T", "N", &m, &n, &k, &k, &k, values + static_cast<long>(columns.first) * k_,
                  block_data(columns.first_block));
    RPT_CHECK(status == dnnl_success, RuntimeFailure, "oneDNN cannot pack a ", columns.count, " x ",
              k_, " int8 block (status ", static_cast<int>(status), ")");
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

  // A thread's whole share in one call: each call pays oneDNN's setup (measured:
  // docs/PERFORMANCE.md "rpt vs CTranslate2 after the unpadded encoder").
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

}  // namespace

std::unique_ptr<const Int8Weights::Products> int8_products(std::vector<std::int8_t> values, int n,
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

std::string_view isa_name(dnnl::cpu_isa isa) {
  switch (isa) {
    case dnnl::cpu_isa::sse41:
      return "sse41";
    case dnnl::cpu_isa::avx:
      return "avx";
    case dnnl::cpu_isa::avx2:
      return "avx2";
    case dnnl::cpu_isa::avx2_vnni:
      return "avx2_vnni";
    case dnnl::cpu_isa::avx512_mic:
      return "avx512_mic";
    case dnnl::cpu_isa::avx512_mic_4ops:
      return "avx512_mic_4ops";
    case dnnl::cpu_isa::avx512_core:
      return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni:
      return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16:
      return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx:
      return "avx512_core_amx";
    default:
      return "unknown";
  }
}

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
  const dnnl_version_t* version = dnnl_version();
  const bool packs = packed_gemm_api() != nullptr && packing_setting() != Packing::kNever;
  return "onednn-" + std::to_string(version->major) + "." + std::to_string(version->minor) + "." +
         std::to_string(version->patch) + (packs ? " packed " : " matmul ") +
         std::string(isa_name(dnnl::get_effective_cpu_isa())) + ", " +
         std::to_string(int8_activation_levels().bits()) + "-bit activations";
}

}  // namespace rpt::kernels
