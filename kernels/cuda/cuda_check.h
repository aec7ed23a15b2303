// CUDA and cuBLAS status checks: a failure becomes rpt::RuntimeFailure with file:line, never an
// abort, so a long-running server survives a failed launch or an exhausted device.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "kernels/errors.h"

#define RPT_CUDA_CHECK(expression)                                                             \
  do {                                                                                         \
    const cudaError_t rpt_cuda_status = (expression);                                          \
    if (rpt_cuda_status != cudaSuccess) {                                                      \
      RPT_THROW(::rpt::RuntimeFailure, "CUDA error ", cudaGetErrorName(rpt_cuda_status), ": ", \
                cudaGetErrorString(rpt_cuda_status), " in ", #expression);                     \
    }                                                                                          \
  } while (false)

#define RPT_CUBLAS_CHECK(expression)                                                            \
  do {                                                                                          \
    const cublasStatus_t rpt_cublas_status = (expression);                                      \
    if (rpt_cublas_status != CUBLAS_STATUS_SUCCESS) {                                           \
      RPT_THROW(::rpt::RuntimeFailure, "cuBLAS error ", cublasGetStatusName(rpt_cublas_status), \
                " in ", #expression);                                                           \
    }                                                                                           \
  } while (false)

// Checks the launch of the kernel just issued (bad configuration, missing device code).
#define RPT_CUDA_CHECK_LAUNCH() RPT_CUDA_CHECK(cudaGetLastError())
