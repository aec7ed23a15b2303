#include "kernels/activation.h"
#include "kernels/cuda/cuda_check.h"

namespace rpt::kernels {
namespace {

__device__ __forceinline__ float activate(float v, ActivationKind activation) {
  switch (activation) {
    case ActivationKind::kRelu:
      return fmaxf(v, 0.0f);
    case ActivationKind::kGelu:
      return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
    case ActivationKind::kSilu:
      return v / (1.0f + expf(-v));
    case ActivationKind::kIdentity:
      break;
  }
  return v;
}

__global__ void bias_activation_kernel(float* x, const float* bias, long count, int cols,
                                       ActivationKind activation) {
  for (long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<long>(gridDim.x) * blockDim.x) {
    const float v = bias != nullptr ? x[i] + bias[i % cols] : x[i];
    x[i] = activate(v, activation);
  }
}

}  // namespace

void bias_activation_cuda(float* x, const float* bias, int rows, int cols,
                          ActivationKind activation, CudaStream stream) {
  const long count = static_cast<long>(rows) * cols;
  if (count == 0) return;
  constexpr int kThreads = 256;
  const int blocks = static_cast<int>(std::min<long>((count + kThreads - 1) / kThreads, 65535));
  bias_activation_kernel<<<blocks, kThreads, 0, stream>>>(x, bias, count, cols, activation);
  RPT_CUDA_CHECK_LAUNCH();
}

}  // namespace rpt::kernels
