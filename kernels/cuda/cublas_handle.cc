#include "kernels/cuda/cublas_handle.h"

#include "kernels/cuda/cuda_check.h"

namespace rpt::kernels {

std::size_t cublas_workspace_bytes(int index, GemmAlgorithm algorithm) {
  if (algorithm == GemmAlgorithm::kBatchInvariant) return 0;
  int major = 0;
  RPT_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, index));
  return static_cast<std::size_t>(major >= 9 ? 32 : 4) << 20;
}

void MatmulDescDeleter::operator()(cublasLtMatmulDescOpaque_t* desc) const {
  cublasLtMatmulDescDestroy(desc);
}

void MatrixLayoutDeleter::operator()(cublasLtMatrixLayoutOpaque_t* layout) const {
  cublasLtMatrixLayoutDestroy(layout);
}

CublasHandle::CublasHandle(CudaStream stream, GemmAlgorithm algorithm)
    : stream_(stream), algorithm_(algorithm) {
  RPT_CUBLAS_CHECK(cublasCreate(&handle_));
  try {
    RPT_CUBLAS_CHECK(cublasSetStream(handle_, stream));
    RPT_CUBLAS_CHECK(cublasLtCreate(&lt_));
  } catch (...) {
    cublasDestroy(handle_);
    throw;
  }
}

CublasHandle::~CublasHandle() {
  frozen_.clear();  // descriptors before the handles
  if (lt_ != nullptr) cublasLtDestroy(lt_);
  if (handle_ != nullptr) cublasDestroy(handle_);
}

}  // namespace rpt::kernels
