#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/cuda/attention_head.cuh"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/lane_group_attention.h"
#include "kernels/cuda/precision.cuh"
#include "kernels/cuda/warp_math.cuh"
#include "kernels/fused_attention.h"

namespace rpt::kernels {
namespace {

// Warps per (query row, head), one block: each takes every kSplits-th tile of keys, then warp 0
// merges their partial softmax sums in warp order. A constant, so a row's sums never depend on
// the batch; four times the warps of one per pair, which the decoder's few hundred (row, head)
// pairs need to keep the GPU's latency hidden.
constexpr int kSplits = 4;
// Floats of a warp's shared memory besides the query and the two [2k+1] tables: its partial
// maximum and normaliser.
constexpr int kPartialScalars = 2;
constexpr int kDimsPerLane = kMaxCudaAttentionHeadDim / kWarp;

// The query's dot product with one key, summed in order of i whichever way the key is read (so
// the result does not depend on its alignment): in 16-byte loads, issued together, where the key
// is aligned for them; else element by element. A lane reads a whole key (keys are rows apart),
// so the loads are what the warp waits on: one per 16 bytes instead of one per element.
template <typename T>
__device__ __forceinline__ float key_dot(const float* query, const T* key, int head_dim) {
  constexpr int kPerLoad = 16 / static_cast<int>(sizeof(T));
  float dot = 0.0f;
  if (head_dim % kPerLoad == 0 && reinterpret_cast<std::uintptr_t>(key) % 16 == 0) {
    const auto* chunks = reinterpret_cast<const uint4*>(key);
#pragma unroll 8
    for (int c = 0; c < head_dim / kPerLoad; ++c) {
      const uint4 raw = chunks[c];
      const T* elements = reinterpret_cast<const T*>(&raw);
#pragma unroll
      for (int e = 0; e < kPerLoad; ++e) dot += query[c * kPerLoad + e] * to_float(elements[e]);
    }
    return dot;
  }
  for (int i = 0; i < head_dim; ++i) dot += query[i] * to_float(key[i]);
  return dot;
}

// One block of kSplits warps per (query row, head). Shared memory per warp: the scaled query
// [head_dim] (later its partial context), the relative key term [2k+1] (warp 0's serves the
// block; the other warps' slots are unused), the bucket sums of the value term [2k+1] and its
// partial maximum and normaliser.
//
// Keys go in tiles of 32, one key per lane, warp w taking tiles w, w + kSplits, ...: the lane
// forms its score, the warp updates its running maximum and normaliser (online softmax),
// rescales its context and buckets, then adds the tile's values with every lane owning
// head_dim / 32 context dimensions. Middle buckets receive at most one key each (r = j - pos + k
// is one-to-one there); the two edge buckets get a warp sum. Warp 0 then merges the partials,
// each rescaled to the common maximum, in warp order. Nothing of size [keys] is stored anywhere.
template <typename T>
__global__ void __launch_bounds__(kWarp* kSplits)
    key_split_attention_kernel(FusedAttentionArgs args) {
  extern __shared__ float shared[];
  const int warp = static_cast<int>(threadIdx.x) / kWarp;
  const int lane = static_cast<int>(threadIdx.x) % kWarp;
  const AttentionHead<T> at(args, static_cast<long>(blockIdx.x));
  const int head_dim = args.head_dim;
  const int width = at.width;
  const bool key_term = at.key_term;
  const bool value_term = at.value_term;
  T* out = at.out;
  const int count = at.count;
  if (count <= 0) {  // the whole block leaves
    if (warp == 0) {
      for (int i = lane; i < head_dim; i += kWarp) out[i] = from_float<T>(0.0f);
    }
    return;
  }

  const int warp_floats = head_dim + 2 * width + kPartialScalars;
  float* query = shared + static_cast<long>(warp) * warp_floats;
  float* buckets = query + head_dim + width;
  float* partial = buckets + width;  // [maximum, normaliser]
  // The relative key term is the block's: warp 0's slot holds it for every warp.
  float* relative_key_term = shared + head_dim;
  for (int i = lane; i < head_dim; i += kWarp) query[i] = to_float(at.query[i]) * args.scale;
  if (value_term) {
    for (int b = lane; b < width; b += kWarp) buckets[b] = 0.0f;
  }
  __syncwarp();
  // q . a_b for every bucket b, once per block: warp w takes buckets w, w + kSplits, ..., its
  // lanes reading a table row side by side (one lane per bucket would read 32 rows per load and
  // serialise on the L1; it was most of a big model's decoder step).
  if (key_term) {
    const T* table = static_cast<const T*>(args.relative_keys);
    for (int b = warp; b < width; b += kSplits) {
      float dot = 0.0f;
      for (int i = lane; i < head_dim; i += kWarp) {
        dot += query[i] * to_float(table[static_cast<long>(b) * head_dim + i]);
      }
      dot = warp_sum(dot);
      if (lane == 0) relative_key_term[b] = dot;
    }
  }
  __syncthreads();
  const T* keys = at.keys;
  const T* values = at.values;
  OnlineSoftmax softmax;
  float context[kDimsPerLane];
#pragma unroll
  for (int c = 0; c < kDimsPerLane; ++c) context[c] = 0.0f;

  for (int first = warp * kWarp; first < count; first += kSplits * kWarp) {
    const int j = first + lane;
    const bool valid = j < count;
    float score = -INFINITY;
    int bucket = 0;
    if (valid) {
      score = at.score(key_dot(query, keys + static_cast<long>(j) * args.position_stride, head_dim),
                       j, relative_key_term, bucket);
    }
    float correction = 0.0f;
    const float p = softmax.add_tile(score, valid, correction);
#pragma unroll
    for (int c = 0; c < kDimsPerLane; ++c) context[c] *= correction;
    if (value_term) add_bucket_weights(buckets, width, correction, p, valid, bucket, lane);

    const int tile = min(kWarp, count - first);
    // Unrolled so that several keys' value loads are in flight at once (the sums stay in order).
#pragma unroll 4
    for (int t = 0; t < tile; ++t) {
      const float weight = __shfl_sync(kFullMask, p, t);
      const T* value = values + static_cast<long>(first + t) * args.position_stride;
#pragma unroll
      for (int c = 0; c < kDimsPerLane; ++c) {
        const int i = lane + c * kWarp;
        if (i < head_dim) context[c] += weight * to_float(value[i]);
      }
    }
  }

  // The partials to shared memory (the query is no longer needed: its place takes the context),
  // then warp 0 merges them. A warp that had no tile has maximum -inf and weighs 0.
  __syncwarp();
#pragma unroll
  for (int c = 0; c < kDimsPerLane; ++c) {
    const int i = lane + c * kWarp;
    if (i < head_dim) query[i] = context[c];
  }
  if (lane == 0) {
    partial[0] = softmax.running_max;
    partial[1] = softmax.normaliser;
  }
  __syncthreads();
  if (warp != 0) return;
  float maximum = -INFINITY;
  for (int w = 0; w < kSplits; ++w)
    maximum = fmaxf(maximum, shared[w * warp_floats + head_dim + 2 * width]);
  float normaliser = 0.0f;
#pragma unroll
  for (int c = 0; c < kDimsPerLane; ++c) context[c] = 0.0f;
  for (int b = lane; b < width && value_term; b += kWarp) {
    float sum = 0.0f;
    for (int w = 0; w < kSplits; ++w) {
      const float* other = shared + w * warp_floats;
      sum += other[head_dim + width + b] * expf(other[head_dim + 2 * width] - maximum);
    }
    buckets[b] = sum;
  }
  for (int w = 0; w < kSplits; ++w) {
    const float* other = shared + w * warp_floats;
    const float scale = expf(other[head_dim + 2 * width] - maximum);  // 0 for an idle warp
    normaliser += other[head_dim + 2 * width + 1] * scale;
#pragma unroll
    for (int c = 0; c < kDimsPerLane; ++c) {
      const int i = lane + c * kWarp;
      if (i < head_dim) context[c] += other[i] * scale;
    }
  }
  __syncwarp();

  const float inverse = 1.0f / normaliser;
  const T* relative_values = static_cast<const T*>(args.relative_values);
#pragma unroll
  for (int c = 0; c < kDimsPerLane; ++c) {
    const int i = lane + c * kWarp;
    if (i >= head_dim) continue;
    float z = context[c];
    if (value_term) {
      for (int b = 0; b < width; ++b) z += buckets[b] * to_float(relative_values[b * head_dim + i]);
    }
    out[i] = from_float<T>(z * inverse);
  }
}

std::size_t key_split_shared_bytes(int head_dim, int max_relative_position) {
  const int width = 2 * max_relative_position + 1;
  return sizeof(float) * kSplits * static_cast<std::size_t>(head_dim + 2 * width + kPartialScalars);
}

}  // namespace

void check_fused_attention_cuda_shape(int head_dim, int max_relative_position) {
  RPT_CHECK(head_dim > 0 && head_dim <= kMaxCudaAttentionHeadDim, InvalidArgument,
            "fused attention supports head_dim up to ", kMaxCudaAttentionHeadDim, ", got ",
            head_dim);
  RPT_CHECK(max_relative_position >= 0, InvalidArgument,
            "fused attention: negative k = ", max_relative_position);
  // Either kernel may run the model (ComputeOptions::gpu_attention): the larger need.
  const std::size_t shared_bytes =
      std::max(key_split_shared_bytes(head_dim, max_relative_position),
               lane_group_attention_shared_bytes(max_relative_position));
  RPT_CHECK(shared_bytes <= 48 * 1024, InvalidArgument, "fused attention: head_dim ", head_dim,
            " with k = ", max_relative_position, " needs ", shared_bytes,
            " bytes of shared memory, over 48 KiB");
}

void fused_attention_cuda(const FusedAttentionArgs& args, CudaStream stream,
                          CudaAttentionKernel kernel) {
  if (args.rows == 0 || args.heads == 0) return;
  check_fused_attention_cuda_shape(args.head_dim, args.max_relative_position);
  if (kernel == CudaAttentionKernel::kLaneGroups) {
    lane_group_attention_cuda(args, stream);
    return;
  }
  const long blocks = static_cast<long>(args.rows) * args.heads;  // a block per (row, head)
  const std::size_t shared_bytes =
      key_split_shared_bytes(args.head_dim, args.max_relative_position);
  dispatch_precision(args.precision, [&](auto tag) {
    using T = decltype(tag);
    key_split_attention_kernel<T>
        <<<static_cast<unsigned>(blocks), kWarp * kSplits, shared_bytes, stream>>>(args);
  });
  RPT_CUDA_CHECK_LAUNCH();
}

}  // namespace rpt::kernels
