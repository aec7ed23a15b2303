// Device-side helpers for precision-generic kernels: float32 arithmetic on float, __half and
// __nv_bfloat16 storage, and one dispatch from a runtime Precision to a template instance.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/precision.h"

namespace rpt::kernels {

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename T>
__device__ __forceinline__ T from_float(float v);
template <>
__device__ __forceinline__ float from_float<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ __half from_float<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

// Calls fn(T{}) with T the storage type of `precision`: float, __half or __nv_bfloat16.
template <typename Fn>
void dispatch_precision(Precision precision, Fn&& fn) {
  switch (precision) {
    case Precision::kFloat16:
      fn(__half{});
      return;
    case Precision::kBFloat16:
      fn(__nv_bfloat16{});
      return;
    case Precision::kFloat32:
    case Precision::kInt8:  // no CUDA int8 path: Engine::create refuses it before any kernel
      fn(float{});
      return;
  }
}

// Grid size for a grid-stride loop over `count` elements.
inline int grid_blocks(long count, int threads) {
  const long blocks = (count + threads - 1) / threads;
  return static_cast<int>(blocks < 1 ? 1 : (blocks > 65535 ? 65535 : blocks));
}

}  // namespace rpt::kernels
