#include "kernels/activation.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/precision.cuh"

namespace rpt::kernels {
namespace {

__device__ __forceinline__ float activate(float v, ActivationKind activation) {
  switch (activation) {
    case ActivationKind::kRelu:
      return fmaxf(v, 0.0f);
    case ActivationKind::kGelu:  // exact erf form, as the CPU
      return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
    case ActivationKind::kGeluTanh:  // the tanh approximation, as the CPU
      return 0.5f * v * (1.0f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
    case ActivationKind::kSilu:
      return v / (1.0f + expf(-v));
    case ActivationKind::kIdentity:
      break;
  }
  return v;
}

// Bias and activation in float32; one rounding to T on the store.
template <typename T>
__global__ void bias_activation_kernel(T* x,           // [count / cols, cols], in place
                                       const T* bias,  // [cols] or nullptr
                                       long count, int cols, ActivationKind activation) {
  for (long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<long>(gridDim.x) * blockDim.x) {
    float v = to_float(x[i]);
    if (bias != nullptr) v += to_float(bias[i % cols]);
    x[i] = from_float<T>(activate(v, activation));
  }
}

// x *= y in float32; one rounding to T on the store.
template <typename T>
__global__ void multiply_kernel(T* x, const T* y, long count, int cols, int ld) {
  for (long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<long>(gridDim.x) * blockDim.x) {
    const long at = (i / cols) * ld + i % cols;
    x[at] = from_float<T>(to_float(x[at]) * to_float(y[at]));
  }
}

}  // namespace

void bias_activation_cuda(const BiasActivationCudaArgs& args, CudaStream stream) {
  const long count = static_cast<long>(args.rows) * args.cols;
  if (count == 0) return;
  constexpr int kThreads = 256;
  dispatch_precision(args.precision, [&](auto zero) {
    using T = decltype(zero);
    bias_activation_kernel<T><<<grid_blocks(count, kThreads), kThreads, 0, stream>>>(
        static_cast<T*>(args.x), static_cast<const T*>(args.bias), count, args.cols,
        args.activation);
  });
  RPT_CUDA_CHECK_LAUNCH();
}

void multiply_cuda(const MultiplyCudaArgs& args, CudaStream stream) {
  const long count = static_cast<long>(args.rows) * args.cols;
  if (count == 0) return;
  constexpr int kThreads = 256;
  dispatch_precision(args.precision, [&](auto zero) {
    using T = decltype(zero);
    multiply_kernel<T><<<grid_blocks(count, kThreads), kThreads, 0, stream>>>(
        static_cast<T*>(args.x), static_cast<const T*>(args.y), count, args.cols, args.ld);
  });
  RPT_CUDA_CHECK_LAUNCH();
}

}  // namespace rpt::kernels
