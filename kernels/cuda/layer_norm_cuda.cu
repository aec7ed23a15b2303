#include <cub/block/block_reduce.cuh>

#include "kernels/cuda/cuda_check.h"
#include "kernels/layer_norm.h"

namespace rpt::kernels {
namespace {

constexpr int kThreads = 256;

// One block per row: mean, then the variance of the centred values (two passes, as the CPU).
__global__ void layer_norm_kernel(const float* in, const float* gamma, const float* beta, int dim,
                                  float eps, float* out) {
  using Reduce = cub::BlockReduce<float, kThreads>;
  __shared__ typename Reduce::TempStorage storage;
  __shared__ float mean_shared;
  __shared__ float inv_std_shared;
  const float* x = in + static_cast<long>(blockIdx.x) * dim;
  float* y = out + static_cast<long>(blockIdx.x) * dim;

  float sum = 0.0f;
  for (int i = threadIdx.x; i < dim; i += kThreads) sum += x[i];
  const float total = Reduce(storage).Sum(sum);
  if (threadIdx.x == 0) mean_shared = total / dim;
  __syncthreads();
  const float mean = mean_shared;

  float squares = 0.0f;
  for (int i = threadIdx.x; i < dim; i += kThreads) {
    const float centered = x[i] - mean;
    squares += centered * centered;
  }
  const float total_squares = Reduce(storage).Sum(squares);
  if (threadIdx.x == 0) inv_std_shared = rsqrtf(total_squares / dim + eps);
  __syncthreads();
  const float inv_std = inv_std_shared;
  for (int i = threadIdx.x; i < dim; i += kThreads) {
    y[i] = (x[i] - mean) * inv_std * gamma[i] + beta[i];
  }
}

}  // namespace

void layer_norm_cuda(const float* in, const float* gamma, const float* beta, int rows, int dim,
                     float eps, float* out, CudaStream stream) {
  if (rows == 0) return;
  layer_norm_kernel<<<rows, kThreads, 0, stream>>>(in, gamma, beta, dim, eps, out);
  RPT_CUDA_CHECK_LAUNCH();
}

}  // namespace rpt::kernels
