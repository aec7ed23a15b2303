// A cuBLAS + cuBLASLt handle bound to one stream, and how gemm_cuda picks its kernels on it.
// Neither copied nor moved (owners hold it where it was made or by unique_ptr). Not thread-safe:
// one handle serves one stream, from one thread at a time (each decoding backend owns one).
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <type_traits>

#include "kernels/precision.h"
#include "kernels/stream.h"

namespace rpt::kernels {

enum class GemmAlgorithm {
  // One cuBLASLt algorithm per GEMM shape (all but the row count), chosen at first use with no
  // split-K and no workspace, then reused for every row count: each row of C is computed the same
  // way whatever else is in the batch, so a sentence's translation does not depend on its batch.
  kBatchInvariant,
  // cuBLAS's own choice for every call (cublasGemmEx): it may split k differently for different
  // row counts, so rows can differ in the last bits between batches.
  kHeuristic,
};

// The cuBLAS workspace a handle of `algorithm` on device `index` should be given: 32 MiB on
// Hopper and later, 4 MiB before (cuBLAS's recommendations); none for kBatchInvariant.
std::size_t cublas_workspace_bytes(int index, GemmAlgorithm algorithm);

// Everything of a GEMM but its row count m (row-major, as GemmCudaArgs).
struct GemmShape {
  Precision input_precision;
  Precision output_precision;
  bool transpose_a;
  bool transpose_b;
  int n;
  int k;
  int lda;
  int ldb;
  int ldc;
  auto operator<=>(const GemmShape&) const = default;
};

struct MatmulDescDeleter {
  void operator()(cublasLtMatmulDescOpaque_t* desc) const;
};
struct MatrixLayoutDeleter {
  void operator()(cublasLtMatrixLayoutOpaque_t* layout) const;
};
using MatmulDesc = std::unique_ptr<cublasLtMatmulDescOpaque_t, MatmulDescDeleter>;
using MatrixLayout = std::unique_ptr<cublasLtMatrixLayoutOpaque_t, MatrixLayoutDeleter>;

// A shape's frozen algorithm with its descriptors (gemm_cuda.cc fills it).
struct FrozenGemm {
  struct RowLayouts {
    MatrixLayout input;   // the activations, op(A) [m, k]
    MatrixLayout output;  // C [m, n]
  };
  MatmulDesc desc;
  MatrixLayout weight;  // op(B) [k, n]
  cublasLtMatmulAlgo_t algorithm{};
  // The most rows one call was checked to run (at least the reference count): a row count the
  // algorithm refuses runs in pieces of this many, each row summed the same way.
  int piece_rows = 1;
  // By m, checked against the algorithm once; no layouts: the algorithm refuses m rows.
  std::map<int, std::optional<RowLayouts>> rows;
};

class CublasHandle {
 public:
  explicit CublasHandle(CudaStream stream,
                        GemmAlgorithm algorithm = GemmAlgorithm::kBatchInvariant);
  ~CublasHandle();
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;

  cublasContext* get() const { return handle_; }
  cublasLtContext* lt() const { return lt_; }
  CudaStream stream() const { return stream_; }
  GemmAlgorithm algorithm() const { return algorithm_; }
  // gemm_cuda's frozen algorithms, by shape.
  std::map<GemmShape, FrozenGemm>& frozen() { return frozen_; }

 private:
  cublasContext* handle_ = nullptr;
  cublasLtContext* lt_ = nullptr;
  CudaStream stream_ = nullptr;
  GemmAlgorithm algorithm_ = GemmAlgorithm::kBatchInvariant;
  std::map<GemmShape, FrozenGemm> frozen_;
};

}  // namespace rpt::kernels
