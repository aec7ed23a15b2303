#include <cmath>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/precision.cuh"
#include "kernels/embedding.h"

namespace rpt::kernels {
namespace {

// One thread per output element. The float32 arithmetic follows embedding_cpu step by step:
// scaled entry, then + sin (even i) or cos (odd i) of position * exp(pair start * -log_base).
// __fmul_rn keeps nvcc from fusing the scale and the encoding into one FMA, which would round
// differently from the CPU.
template <typename T>
__global__ void embedding_kernel(const int* ids,        // [count]
                                 const T* table,        // [vocab, dim]
                                 const int* positions,  // [count] or nullptr
                                 long count, int dim, float scale, float log_base,
                                 T* out) {  // [count, dim]
  const long elements = count * dim;
  for (long e = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; e < elements;
       e += static_cast<long>(gridDim.x) * blockDim.x) {
    const long t = e / dim;
    const int i = static_cast<int>(e % dim);
    float v = __fmul_rn(to_float(table[static_cast<long>(ids[t]) * dim + i]), scale);
    if (positions != nullptr) {
      const int pair_start = i & ~1;  // the sin/cos pair (pair_start, pair_start + 1)
      const float angle =
          static_cast<float>(positions[t]) * expf(static_cast<float>(pair_start) * -log_base);
      v += (i == pair_start) ? sinf(angle) : cosf(angle);
    }
    out[e] = from_float<T>(v);
  }
}

}  // namespace

void embedding_cuda(const EmbeddingCudaArgs& args, CudaStream stream) {
  const long elements = static_cast<long>(args.count) * args.dim;
  if (elements == 0) return;
  // Computed on the host exactly as the CPU definition does (double, then rounded to float).
  const auto log_base = static_cast<float>(std::log(10000.0) / args.dim);
  constexpr int kThreads = 256;
  dispatch_precision(args.precision, [&](auto zero) {
    using T = decltype(zero);
    embedding_kernel<T><<<grid_blocks(elements, kThreads), kThreads, 0, stream>>>(
        args.ids, static_cast<const T*>(args.table), args.positions, args.count, args.dim,
        args.scale, log_base, static_cast<T*>(args.out));
  });
  RPT_CUDA_CHECK_LAUNCH();
}

}  // namespace rpt::kernels
