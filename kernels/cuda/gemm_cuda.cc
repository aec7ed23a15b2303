#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>

#include "kernels/cuda/cublas_handle.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/gemm.h"

namespace rpt::kernels {
namespace {

cudaDataType_t cuda_data_type(Precision precision) {
  switch (precision) {
    case Precision::kFloat16:
      return CUDA_R_16F;
    case Precision::kBFloat16:
      return CUDA_R_16BF;
    case Precision::kInt8:  // refused for CUDA by Engine::create
    case Precision::kFloat32:
      break;
  }
  return CUDA_R_32F;
}

// The row count the frozen algorithm is chosen for: a decoder step of 32 sentences at beam 4.
constexpr int kReferenceRows = 128;
// Larger row counts (encoder batches) a candidate is also checked at: on Hopper, cuBLASLt's first
// candidates for float16 at 128 rows refuse 512 rows. The first candidate that runs all of them
// is frozen; failing that, the first that runs 1 and kReferenceRows, calls over more rows than it
// runs in one go running in pieces.
constexpr int kLargeRowCounts[] = {65536, 8192, 1024};
// Row counts whose checked layouts a shape keeps.
constexpr std::size_t kCachedRowCounts = 1024;
// The alignment the frozen algorithm of `s` may assume for a matrix with row stride `ld`: that
// of the stride (the engine's matrices start at allocations or whole rows into them), up to 16.
std::uint32_t alignment_bytes(int ld, Precision precision) {
  const std::size_t stride = static_cast<std::size_t>(ld) * precision_size(precision);
  std::uint32_t alignment = 16;
  while (stride % alignment != 0) alignment /= 2;
  return alignment;
}

template <typename T>
void set_desc(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attribute, T value) {
  RPT_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, attribute, &value, sizeof(value)));
}

template <typename T>
void set_preference(cublasLtMatmulPreference_t preference,
                    cublasLtMatmulPreferenceAttributes_t attribute, T value) {
  RPT_CUBLAS_CHECK(
      cublasLtMatmulPreferenceSetAttribute(preference, attribute, &value, sizeof(value)));
}

template <typename T>
T algorithm_config(const cublasLtMatmulAlgo_t& algorithm,
                   cublasLtMatmulAlgoConfigAttributes_t attribute) {
  T value{};
  std::size_t written = 0;
  RPT_CUBLAS_CHECK(
      cublasLtMatmulAlgoConfigGetAttribute(&algorithm, attribute, &value, sizeof(value), &written));
  return value;
}

MatrixLayout matrix_layout(Precision precision, std::uint64_t rows, std::uint64_t cols, int ld) {
  cublasLtMatrixLayout_t layout = nullptr;
  RPT_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&layout, cuda_data_type(precision), rows, cols, ld));
  return MatrixLayout(layout);
}

// Column-major, as cuBLAS sees the row-major call (see gemm_cuda): its A is our B, its B our A.
MatrixLayout weight_layout(const GemmShape& s) {
  return s.transpose_b ? matrix_layout(s.input_precision, s.k, s.n, s.ldb)
                       : matrix_layout(s.input_precision, s.n, s.k, s.ldb);
}

FrozenGemm::RowLayouts row_layouts(const GemmShape& s, int m) {
  return {.input = s.transpose_a ? matrix_layout(s.input_precision, m, s.k, s.lda)
                                 : matrix_layout(s.input_precision, s.k, m, s.lda),
          .output = matrix_layout(s.output_precision, s.n, m, s.ldc)};
}

bool fits(cublasLtHandle_t lt, const FrozenGemm& gemm, const FrozenGemm::RowLayouts& rows,
          const cublasLtMatmulAlgo_t& algorithm) {
  cublasLtMatmulHeuristicResult_t result{};
  return cublasLtMatmulAlgoCheck(lt, gemm.desc.get(), gemm.weight.get(), rows.input.get(),
                                 rows.output.get(), rows.output.get(), &algorithm,
                                 &result) == CUBLAS_STATUS_SUCCESS &&
         result.workspaceSize == 0;
}

// The largest row count of `counts` the algorithm runs, or 0.
int largest_fitting(cublasLtHandle_t lt, const FrozenGemm& gemm, const GemmShape& s,
                    const cublasLtMatmulAlgo_t& algorithm) {
  for (const int m : kLargeRowCounts) {
    // A transposed A is stored [k, m] with lda >= m: no more rows than its stride holds.
    if (s.transpose_a && m > s.lda) continue;
    if (fits(lt, gemm, row_layouts(s, m), algorithm)) return m;
  }
  return 0;
}

// Of cuBLASLt's candidates at kReferenceRows, those that sum each element of C in one sequence
// (no split-K, no reduction, no workspace) and also run a single row; the first that also runs
// kLargeRowCounts[0] rows, else the one that runs the most.
FrozenGemm freeze(cublasLtHandle_t lt, const GemmShape& s) {
  FrozenGemm gemm;
  cublasLtMatmulDesc_t desc = nullptr;
  RPT_CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  gemm.desc.reset(desc);
  set_desc<std::int32_t>(desc, CUBLASLT_MATMUL_DESC_TRANSA,
                         s.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N);
  set_desc<std::int32_t>(desc, CUBLASLT_MATMUL_DESC_TRANSB,
                         s.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N);
  gemm.weight = weight_layout(s);

  cublasLtMatmulPreference_t preference = nullptr;
  RPT_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&preference));
  const std::unique_ptr<cublasLtMatmulPreferenceOpaque_t,
                        decltype(&cublasLtMatmulPreferenceDestroy)>
      owned_preference(preference, &cublasLtMatmulPreferenceDestroy);
  set_preference<std::uint64_t>(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, 0);
  set_preference<std::uint32_t>(preference, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK,
                                CUBLASLT_REDUCTION_SCHEME_NONE);
  // cuBLAS's A is our B (the weight), its B our A.
  set_preference<std::uint32_t>(preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
                                alignment_bytes(s.ldb, s.input_precision));
  set_preference<std::uint32_t>(preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                                alignment_bytes(s.lda, s.input_precision));
  for (const auto attribute :
       {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES}) {
    set_preference<std::uint32_t>(preference, attribute,
                                  alignment_bytes(s.ldc, s.output_precision));
  }

  // A transposed A is stored [k, m] with lda >= m: the reference layout must fit that stride
  // (lda, part of the shape, then usually is m itself: one algorithm per row count).
  const int reference_rows = s.transpose_a ? std::min(kReferenceRows, s.lda) : kReferenceRows;
  const FrozenGemm::RowLayouts reference = row_layouts(s, reference_rows);
  const FrozenGemm::RowLayouts single = row_layouts(s, 1);
  constexpr int kCandidates = 16;
  cublasLtMatmulHeuristicResult_t candidates[kCandidates] = {};
  int count = 0;
  // NOT_SUPPORTED: no candidate at all, reported below with the shape.
  const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(
      lt, desc, gemm.weight.get(), reference.input.get(), reference.output.get(),
      reference.output.get(), preference, kCandidates, candidates, &count);
  if (status == CUBLAS_STATUS_NOT_SUPPORTED) {
    count = 0;
  } else {
    RPT_CUBLAS_CHECK(status);
  }
  int best_rows = 0;
  for (int i = 0; i < count; ++i) {
    const cublasLtMatmulAlgo_t& algorithm = candidates[i].algo;
    if (candidates[i].state != CUBLAS_STATUS_SUCCESS || candidates[i].workspaceSize != 0 ||
        algorithm_config<std::int32_t>(algorithm, CUBLASLT_ALGO_CONFIG_SPLITK_NUM) > 1 ||
        algorithm_config<std::uint32_t>(algorithm, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME) !=
            CUBLASLT_REDUCTION_SCHEME_NONE ||
        !fits(lt, gemm, single, algorithm)) {
      continue;
    }
    const int rows = std::max(reference_rows, largest_fitting(lt, gemm, s, algorithm));
    if (rows > best_rows) {
      best_rows = rows;
      gemm.algorithm = algorithm;
      gemm.piece_rows = rows;
    }
    if (rows >= kLargeRowCounts[0]) break;
  }
  if (best_rows > 0) return gemm;
  RPT_THROW(RuntimeFailure, "no batch-invariant cuBLASLt algorithm for a GEMM of n ", s.n, ", k ",
            s.k, ", ", precision_name(s.input_precision), " to ",
            precision_name(s.output_precision), " (", count, " candidates)");
}

void batch_invariant_gemm(const GemmCudaArgs& args, CublasHandle& handle) {
  const GemmShape shape{.input_precision = args.input_precision,
                        .output_precision = args.output_precision,
                        .transpose_a = args.transpose_a,
                        .transpose_b = args.transpose_b,
                        .n = args.n,
                        .k = args.k,
                        .lda = args.lda,
                        .ldb = args.ldb,
                        .ldc = args.ldc};
  const std::pair<const void*, std::uint32_t> matrices[] = {
      {args.a, alignment_bytes(args.lda, args.input_precision)},
      {args.b, alignment_bytes(args.ldb, args.input_precision)},
      {args.c, alignment_bytes(args.ldc, args.output_precision)}};
  for (const auto& [matrix, alignment] : matrices) {
    RPT_CHECK(reinterpret_cast<std::uintptr_t>(matrix) % alignment == 0, InvalidArgument,
              "batch-invariant GEMM (n ", args.n, ", k ", args.k, "): a matrix is not ", alignment,
              "-byte aligned like its row stride");
  }
  auto found = handle.frozen().find(shape);
  if (found == handle.frozen().end()) {
    found = handle.frozen().emplace(shape, freeze(handle.lt(), shape)).first;
  }
  FrozenGemm& gemm = found->second;
  const std::size_t a_row = (args.transpose_a ? 1 : static_cast<std::size_t>(args.lda)) *
                            precision_size(args.input_precision);
  const std::size_t c_row =
      static_cast<std::size_t>(args.ldc) * precision_size(args.output_precision);
  // Rows [first, first + m) in one call if the algorithm runs m rows, else in pieces: of
  // piece_rows, then of kReferenceRows, both checked when the algorithm was frozen.
  const auto run = [&](const auto& self, int first, int m) -> void {
    auto rows = gemm.rows.find(m);
    if (rows == gemm.rows.end()) {
      // Encoder batches bring many row counts over a server's life: keep the cache bounded.
      if (gemm.rows.size() >= kCachedRowCounts) gemm.rows.clear();
      FrozenGemm::RowLayouts layouts = row_layouts(shape, m);
      std::optional<FrozenGemm::RowLayouts> checked;
      if (fits(handle.lt(), gemm, layouts, gemm.algorithm)) checked = std::move(layouts);
      rows = gemm.rows.emplace(m, std::move(checked)).first;
    }
    if (!rows->second) {
      const int piece = m > gemm.piece_rows ? gemm.piece_rows : kReferenceRows;
      RPT_CHECK(m > piece, RuntimeFailure, "the frozen cuBLASLt algorithm for n ", args.n, ", k ",
                args.k, " cannot run ", m, " rows");
      for (int start = 0; start < m; start += piece) {
        self(self, first + start, std::min(piece, m - start));
      }
      return;
    }
    const auto* a = static_cast<const std::byte*>(args.a) + first * a_row;
    auto* c = static_cast<std::byte*>(args.c) + first * c_row;
    RPT_CUBLAS_CHECK(cublasLtMatmul(handle.lt(), gemm.desc.get(), &args.alpha, args.b,
                                    gemm.weight.get(), a, rows->second->input.get(), &args.beta, c,
                                    rows->second->output.get(), c, rows->second->output.get(),
                                    &gemm.algorithm, nullptr, 0, handle.stream()));
  };
  run(run, 0, args.m);
}

}  // namespace

// Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: swap the operands, keep the
// transposition flags (a row-major matrix read as column-major is already transposed).
// CUBLAS_COMPUTE_32F, handles in the default math mode: float32 accumulation for every input
// type, float32 inputs never rounded to TF32 (docs/ARCHITECTURE.md "Design notes").
void gemm_cuda(const GemmCudaArgs& args, CublasHandle* handle) {
  if (args.m == 0 || args.n == 0) return;
  // The combinations cuBLAS supports with CUBLAS_COMPUTE_32F.
  RPT_CHECK(
      args.output_precision == args.input_precision || args.output_precision == Precision::kFloat32,
      InvalidArgument, "GEMM of ", precision_name(args.input_precision), " inputs cannot write ",
      precision_name(args.output_precision));
  RPT_CHECK(handle != nullptr, InvalidArgument, "GEMM without a cuBLAS handle");
  // k = 0 (C = beta C) needs no algorithm to be the same for every row count.
  if (handle->algorithm() == GemmAlgorithm::kBatchInvariant && args.k > 0) {
    batch_invariant_gemm(args, *handle);
    return;
  }
  const cudaDataType_t input_type = cuda_data_type(args.input_precision);
  RPT_CUBLAS_CHECK(cublasGemmEx(
      handle->get(), args.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N,
      args.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N, args.n, args.m, args.k, &args.alpha, args.b,
      input_type, args.ldb, args.a, input_type, args.lda, &args.beta, args.c,
      cuda_data_type(args.output_precision), args.ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

}  // namespace rpt::kernels
