#include <cmath>
#include <cstdint>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/precision.cuh"
#include "kernels/fused_attention.h"
#include "kernels/position.h"

namespace rpt::kernels {
namespace {

constexpr int kWarp = 32;
// Warps per (query row, head), one block: each takes every kSplits-th tile of keys, then warp 0
// merges their partial softmax sums in warp order. A constant, so a row's sums never depend on
// the batch; four times the warps of one per pair, which the decoder's few hundred (row, head)
// pairs need to keep the GPU's latency hidden.
constexpr int kSplits = 4;
// Floats of a warp's shared memory besides the query and the two [2k+1] tables: its partial
// maximum and normaliser.
constexpr int kPartialScalars = 2;
constexpr int kMaxHeadDim = 256;
constexpr int kDimsPerLane = kMaxHeadDim / kWarp;
constexpr unsigned kFullMask = 0xffffffffu;

// Butterfly reductions: every lane ends with the same value, in a fixed order (deterministic, so
// a row's result never depends on the rows launched beside it).
__device__ __forceinline__ float warp_sum(float v) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(kFullMask, v, offset);
  return v;
}
__device__ __forceinline__ float warp_max(float v) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) {
    v = fmaxf(v, __shfl_xor_sync(kFullMask, v, offset));
  }
  return v;
}

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
__global__ void __launch_bounds__(kWarp* kSplits) fused_attention_kernel(FusedAttentionArgs args) {
  extern __shared__ float shared[];
  const int warp = static_cast<int>(threadIdx.x) / kWarp;
  const int lane = static_cast<int>(threadIdx.x) % kWarp;
  const long pair = blockIdx.x;
  const int row = static_cast<int>(pair / args.heads);
  const int head = static_cast<int>(pair % args.heads);
  const int head_dim = args.head_dim;
  const int k = args.max_relative_position;
  const int width = 2 * k + 1;
  const bool key_term = k > 0 && args.relative_keys != nullptr;
  const bool value_term = k > 0 && args.relative_values != nullptr;

  T* out = static_cast<T*>(args.out) + static_cast<long>(row) * args.out_stride +
           static_cast<long>(head) * head_dim;
  const int count = args.key_counts[row];
  if (count <= 0) {  // the whole block leaves
    if (warp == 0) {
      for (int i = lane; i < head_dim; i += kWarp) out[i] = from_float<T>(0.0f);
    }
    return;
  }
  const int position = args.query_positions[row];

  const int warp_floats = head_dim + 2 * width + kPartialScalars;
  float* query = shared + static_cast<long>(warp) * warp_floats;
  float* buckets = query + head_dim + width;
  float* partial = buckets + width;  // [maximum, normaliser]
  // The relative key term is the block's: warp 0's slot holds it for every warp.
  float* relative_key_term = shared + head_dim;
  const T* q = static_cast<const T*>(args.queries) + static_cast<long>(row) * args.query_stride +
               static_cast<long>(head) * head_dim;
  for (int i = lane; i < head_dim; i += kWarp) query[i] = to_float(q[i]) * args.scale;
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
  const int bias_centre = (args.offset_bias_width - 1) / 2;
  const float* bias = args.offset_bias != nullptr
                          ? args.offset_bias + static_cast<long>(head) * args.offset_bias_width +
                                bias_centre - position
                          : nullptr;

  const T* base = static_cast<const T*>(args.sequences[row]) + static_cast<long>(head) * head_dim;
  const T* keys = base + args.key_shift;
  const T* values = base + args.value_shift;
  float running_max = -INFINITY;
  float normaliser = 0.0f;
  float context[kDimsPerLane];
#pragma unroll
  for (int c = 0; c < kDimsPerLane; ++c) context[c] = 0.0f;

  for (int first = warp * kWarp; first < count; first += kSplits * kWarp) {
    const int j = first + lane;
    const bool valid = j < count;
    float score = -INFINITY;
    int bucket = 0;
    if (valid) {
      score = key_dot(query, keys + static_cast<long>(j) * args.position_stride, head_dim);
      if (k > 0) bucket = relative_index(position, j, k);
      if (key_term) score += relative_key_term[bucket];
      if (bias != nullptr) score += bias[j];
    }
    const float new_max = fmaxf(running_max, warp_max(score));  // finite: lane 0 is valid
    const float correction = expf(running_max - new_max);       // 0 on the first tile
    const float p = valid ? expf(score - new_max) : 0.0f;
    normaliser = normaliser * correction + warp_sum(p);
#pragma unroll
    for (int c = 0; c < kDimsPerLane; ++c) context[c] *= correction;

    if (value_term) {
      for (int b = lane; b < width; b += kWarp) buckets[b] *= correction;
      const float left = warp_sum(valid && bucket == 0 ? p : 0.0f);
      const float right = warp_sum(valid && bucket == width - 1 ? p : 0.0f);
      __syncwarp();
      if (valid && bucket > 0 && bucket < width - 1) buckets[bucket] += p;
      if (lane == 0) {
        buckets[0] += left;
        buckets[width - 1] += right;
      }
      __syncwarp();
    }

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
    running_max = new_max;
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
    partial[0] = running_max;
    partial[1] = normaliser;
  }
  __syncthreads();
  if (warp != 0) return;
  float maximum = -INFINITY;
  for (int w = 0; w < kSplits; ++w)
    maximum = fmaxf(maximum, shared[w * warp_floats + head_dim + 2 * width]);
  normaliser = 0.0f;
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

}  // namespace

namespace {

std::size_t shared_bytes_for(int head_dim, int max_relative_position) {
  const int width = 2 * max_relative_position + 1;
  return sizeof(float) * kSplits * static_cast<std::size_t>(head_dim + 2 * width + kPartialScalars);
}

}  // namespace

void check_fused_attention_cuda_shape(int head_dim, int max_relative_position) {
  RPT_CHECK(head_dim > 0 && head_dim <= kMaxHeadDim, InvalidArgument,
            "fused attention supports head_dim up to ", kMaxHeadDim, ", got ", head_dim);
  RPT_CHECK(max_relative_position >= 0, InvalidArgument,
            "fused attention: negative k = ", max_relative_position);
  const std::size_t shared_bytes = shared_bytes_for(head_dim, max_relative_position);
  RPT_CHECK(shared_bytes <= 48 * 1024, InvalidArgument, "fused attention: head_dim ", head_dim,
            " with k = ", max_relative_position, " needs ", shared_bytes,
            " bytes of shared memory, over 48 KiB");
}

void fused_attention_cuda(const FusedAttentionArgs& args, CudaStream stream) {
  if (args.rows == 0 || args.heads == 0) return;
  check_fused_attention_cuda_shape(args.head_dim, args.max_relative_position);
  const long pairs = static_cast<long>(args.rows) * args.heads;
  const long blocks = pairs;
  const std::size_t shared_bytes = shared_bytes_for(args.head_dim, args.max_relative_position);
  dispatch_precision(args.precision, [&](auto tag) {
    using T = decltype(tag);
    fused_attention_kernel<T>
        <<<static_cast<unsigned>(blocks), kWarp * kSplits, shared_bytes, stream>>>(args);
  });
  RPT_CUDA_CHECK_LAUNCH();
}

}  // namespace rpt::kernels
