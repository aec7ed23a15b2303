#include <cstdlib>
#include <optional>
#include <string_view>

#include "kernels/cpu/blis_sgemm_cpu.h"
#include "kernels/cpu/onednn_cpu.h"
#include "kernels/errors.h"
#include "kernels/packed_sgemm.h"
#include "kernels/parallel.h"

namespace rpt::kernels {
namespace {

using SgemmCompute = dnnl_status_t (*)(const char* transa, const char* transb, const dnnl_dim_t* m,
                                       const dnnl_dim_t* n, const dnnl_dim_t* k, const float* a,
                                       const dnnl_dim_t* lda, const float* b, const dnnl_dim_t* ldb,
                                       const float* beta, float* c, const dnnl_dim_t* ldc);
using PackedSgemmApi = PackedGemmFunctions<float, float, SgemmCompute>;

const PackedSgemmApi* packed_sgemm_api() {
  return PackedSgemmApi::find(
      "_ZN4dnnl4impl3cpu19sgemm_pack_get_sizeEPKcS3_S3_PKlS5_S5_S5_S5_PmPb",
      "_ZN4dnnl4impl3cpu10sgemm_packEPKcS3_S3_PKlS5_S5_S5_S5_PKfPf",
      "_ZN4dnnl4impl3cpu13sgemm_computeEPKcS3_PKlS5_S5_PKfS5_S7_S5_S7_PfS5_");
}

// Rows the layout is asked for; it does not depend on them (tests/kernels/gemm_invariance_test.cc).
constexpr dnnl_dim_t kPackingRows = 128;

// Where AVX-512 begins among oneDNN's ISAs: below it (AVX2, AVX) the packed sgemm's results for a
// row depend on how many rows share the call (measured: 33 to 76 of 76 batches per shape differ
// on AVX2; none on avx512_core, nor on SSE4.1, whose speed is no match for BLIS).
bool avx512_dispatch(dnnl::cpu_isa isa) {
  switch (isa) {
    case dnnl::cpu_isa::avx512_core:
    case dnnl::cpu_isa::avx512_core_vnni:
    case dnnl::cpu_isa::avx512_core_bf16:
    case dnnl::cpu_isa::avx512_core_amx:
      return true;
    default:
      return false;
  }
}

bool choose_packing() {
  const char* forced = std::getenv("RPT_FLOAT32_GEMM");
  const std::string_view setting = forced != nullptr ? forced : "";
  const bool available =
      packed_sgemm_api() != nullptr && avx512_dispatch(dnnl::get_effective_cpu_isa());
  if (setting.empty()) return available;
  if (setting != "onednn") return false;  // BLIS's sup or packed path (blis_sgemm_cpu.h)
  RPT_CHECK(packed_sgemm_api() != nullptr, InvalidArgument,
            "RPT_FLOAT32_GEMM=onednn: this oneDNN has no packed sgemm");
  RPT_CHECK(available, InvalidArgument, "RPT_FLOAT32_GEMM=onednn needs oneDNN's AVX-512 kernels (",
            "it dispatches to ", onednn_isa_name(), " here): only they keep a row's result ",
            "independent of its batch");
  return true;
}

}  // namespace

struct PackedFloat32Weights::Blocks {
  explicit Blocks(std::vector<std::size_t> offsets) : buffer(std::move(offsets)) {}
  float* block(int b) const { return reinterpret_cast<float*>(buffer.block(b)); }
  PackedBlockBuffer buffer;
};

PackedFloat32Weights::~PackedFloat32Weights() = default;

std::size_t PackedFloat32Weights::layout_bytes() const { return blocks_->buffer.bytes(); }

std::shared_ptr<const PackedFloat32Weights> PackedFloat32Weights::pack(const float* weights,
                                                                       int rows, int cols) {
  const PackedSgemmApi* api = packed_sgemm_api();
  RPT_CHECK(api != nullptr, RuntimeFailure, "oneDNN's packed sgemm is missing");
  std::shared_ptr<PackedFloat32Weights> out(new PackedFloat32Weights());
  out->rows_ = rows;
  out->cols_ = cols;
  out->block_columns_ = packed_block_columns(rows);
  out->blocks_ = std::make_unique<Blocks>(PackedBlockBuffer::offsets(
      rows, out->block_columns_,
      [&](int columns) { return api->packed_bytes(columns, cols, kPackingRows, "float32"); }));
  // Blocks are packed alone, so in parallel (each thread's oneDNN on one OpenMP thread, as the
  // products run): the same bytes whichever thread packs a block.
  parallel_for(out->blocks_->buffer.blocks(), 1, [&](long begin, long end) {
    const OneOpenMpThread one_thread;
    for (long b = begin; b < end; ++b) {
      const int first = static_cast<int>(b) * out->block_columns_;
      api->pack_block(weights + static_cast<long>(first) * cols,
                      std::min(out->block_columns_, rows - first), cols, kPackingRows,
                      out->blocks_->block(static_cast<int>(b)), "float32");
    }
  });
  out->bytes_ = out->blocks_->buffer.resident_bytes();
  return out;
}

// One thread's part, rows [m0, m1) x column blocks [b0, b1): per block, in column-major terms,
// C [columns, rows] (leading dimension output_stride) = W_block [columns, k] x input^T [k, rows]
// (leading dimension input_stride), which is output [rows, columns] row-major.
void packed_linear_cpu(const PackedLinearArgs& args) {
  const PackedFloat32Weights& weights = *args.weights;
  if (args.rows == 0 || weights.rows() == 0) return;
  const PackedSgemmApi& api = *packed_sgemm_api();
  const dnnl_dim_t k = weights.cols(), ldb = args.input_stride, ldc = args.output_stride;
  parallel_gemm_column_blocks(
      args.rows, weights.rows(), weights.cols(), weights.block_columns(),
      [&](long m0, long m1, long b0, long b1) {
        use_one_openmp_thread();
        const dnnl_dim_t n = m1 - m0;
        const float beta = 0.0f;
        for (long b = b0; b < b1; ++b) {
          const long first = b * weights.block_columns();
          const dnnl_dim_t m = std::min<long>(weights.block_columns(), weights.rows() - first);
          const dnnl_status_t status =
              api.compute("P", "N", &m, &n, &k, weights.blocks().block(static_cast<int>(b)), &k,
                          args.input + m0 * args.input_stride, &ldb, &beta,
                          args.output + m0 * args.output_stride + first, &ldc);
          RPT_CHECK(status == dnnl_success, RuntimeFailure,
                    "oneDNN's packed float32 GEMM failed (status ", static_cast<int>(status), ")");
        }
      });
}

bool float32_linear_packed() {
  static const bool packed = choose_packing();
  return packed;
}

std::string float32_linear_description() {
  return float32_linear_packed() ? onednn_version_name() + " packed " + onednn_isa_name()
                                 : blis_sgemm_description();
}

}  // namespace rpt::kernels
