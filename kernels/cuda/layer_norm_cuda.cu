#include <cub/block/block_reduce.cuh>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/precision.cuh"
#include "kernels/layer_norm.h"

namespace rpt::kernels {
namespace {

constexpr int kThreads = 256;

// One block per row: mean, then the variance of the centred values (two passes, as the CPU),
// both in float32 whatever T is; RMS norm: no mean, no beta. Each element is read and written by
// the same thread, the write after its last read, so `out` may alias `in` (no __restrict__ here
// on purpose).
template <typename T, bool kRms>
__global__ void layer_norm_kernel(const T* in,     // [rows, dim]
                                  const T* gamma,  // [dim]
                                  const T* beta,   // [dim]; unused with kRms
                                  int dim, float eps,
                                  T* out) {  // [rows, dim]
  using Reduce = cub::BlockReduce<float, kThreads>;
  __shared__ typename Reduce::TempStorage storage;
  __shared__ float mean_shared;
  __shared__ float inv_std_shared;
  const T* x = in + static_cast<long>(blockIdx.x) * dim;
  T* y = out + static_cast<long>(blockIdx.x) * dim;

  if constexpr (kRms) {
    if (threadIdx.x == 0) mean_shared = 0.0f;
  } else {
    float sum = 0.0f;
    for (int i = threadIdx.x; i < dim; i += kThreads) sum += to_float(x[i]);
    const float total = Reduce(storage).Sum(sum);
    if (threadIdx.x == 0) mean_shared = total / dim;
  }
  __syncthreads();  // also orders the reuse of `storage`
  const float mean = mean_shared;

  float squares = 0.0f;
  for (int i = threadIdx.x; i < dim; i += kThreads) {
    const float centered = to_float(x[i]) - mean;
    squares += centered * centered;
  }
  const float total_squares = Reduce(storage).Sum(squares);
  if (threadIdx.x == 0) inv_std_shared = rsqrtf(total_squares / dim + eps);
  __syncthreads();
  const float inv_std = inv_std_shared;
  for (int i = threadIdx.x; i < dim; i += kThreads) {
    const float normalized = (to_float(x[i]) - mean) * inv_std;
    if constexpr (kRms) {
      y[i] = from_float<T>(normalized * to_float(gamma[i]));
    } else {
      y[i] = from_float<T>(normalized * to_float(gamma[i]) + to_float(beta[i]));
    }
  }
}

}  // namespace

void layer_norm_cuda(const LayerNormCudaArgs& args, CudaStream stream) {
  if (args.rows == 0 || args.dim == 0) return;
  dispatch_precision(args.precision, [&](auto zero) {
    using T = decltype(zero);
    const auto* in = static_cast<const T*>(args.in);
    const auto* gamma = static_cast<const T*>(args.gamma);
    const auto* beta = static_cast<const T*>(args.beta);
    auto* out = static_cast<T*>(args.out);
    if (args.rms) {
      layer_norm_kernel<T, true>
          <<<args.rows, kThreads, 0, stream>>>(in, gamma, beta, args.dim, args.eps, out);
    } else {
      layer_norm_kernel<T, false>
          <<<args.rows, kThreads, 0, stream>>>(in, gamma, beta, args.dim, args.eps, out);
    }
  });
  RPT_CUDA_CHECK_LAUNCH();
}

}  // namespace rpt::kernels
