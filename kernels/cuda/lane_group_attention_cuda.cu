#include "kernels/cuda/lane_group_attention.h"

#include <cmath>
#include <cstdint>

#include "kernels/cuda/attention_head.cuh"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/precision.cuh"
#include "kernels/cuda/warp_math.cuh"
#include "kernels/position.h"

namespace rpt::kernels {
namespace {

constexpr int kPairsPerBlock = 4;  // warps of a block, each its own (row, head)
constexpr int kChunkBytes = 16;    // one vector load
// Resident blocks asked of the compiler (64 registers a thread): a full multiprocessor of warps
// to hide the loads' latency.
constexpr int kBlocksPerMultiprocessor = 8;

// Floats of a warp's shared memory: the key term and the bucket weights, [2k+1] each, and the
// scores of a tile of 32 keys.
__host__ __device__ constexpr int warp_floats(int width) { return 2 * width + kWarp; }

// How a warp covers one head: the head's row in chunks of 16 bytes, a group of `lanes` lanes (a
// power of two) per key, lane m of a group holding chunks m, m + lanes, ...; kWarp / lanes
// groups take a tile's keys in turn.
struct LaneGroups {
  int chunks = 0;
  int lanes = 0;
};

__device__ __forceinline__ bool vector_aligned(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % kChunkBytes == 0;
}

// Chunk c of a head's row (head_dim elements) as floats: one 16-byte load where `vector` (the
// row is 16-byte aligned) and the chunk is whole, else element by element with zeros past
// head_dim. Either way the same values, so sums do not depend on the alignment.
template <typename T>
__device__ __forceinline__ void load_chunk(const T* row, int c, int head_dim, bool vector,
                                           float* x) {
  constexpr int kElements = kChunkBytes / static_cast<int>(sizeof(T));
  const int first = c * kElements;
  if (vector && first + kElements <= head_dim) {
    const uint4 raw = *reinterpret_cast<const uint4*>(row + first);
    const T* elements = reinterpret_cast<const T*>(&raw);
#pragma unroll
    for (int e = 0; e < kElements; ++e) x[e] = to_float(elements[e]);
    return;
  }
#pragma unroll
  for (int e = 0; e < kElements; ++e) {
    x[e] = first + e < head_dim ? to_float(row[first + e]) : 0.0f;
  }
}

template <typename T>
__device__ __forceinline__ void store_chunk(T* row, int c, int head_dim, bool vector,
                                            const float* x) {
  constexpr int kElements = kChunkBytes / static_cast<int>(sizeof(T));
  const int first = c * kElements;
  if (vector && first + kElements <= head_dim) {
    uint4 raw;
    T* elements = reinterpret_cast<T*>(&raw);
#pragma unroll
    for (int e = 0; e < kElements; ++e) elements[e] = from_float<T>(x[e]);
    *reinterpret_cast<uint4*>(row + first) = raw;
    return;
  }
#pragma unroll
  for (int e = 0; e < kElements; ++e) {
    if (first + e < head_dim) row[first + e] = from_float<T>(x[e]);
  }
}

// A warp per (query row, head). The lane's chunks of the scaled query stay in registers. The
// key term q . a_b is formed for the buckets the row's keys fall in (r(pos, 0) .. r(pos, count
// - 1): k + 1 of them for a decoder row), a group per bucket. Keys go in tiles of 32: the groups
// take the tile's keys in turn, each key's dot summed over its group (coalesced 16-byte loads,
// a few keys in flight per lane), the scores pass through shared memory to a lane per key for
// the online softmax (warp_math.cuh, as the key-split kernel), then the groups take the tile's
// values in turn, each lane adding weight x its chunks. At the end each group adds its share of
// the bucket weights x V_rel, the groups' partial contexts are summed (butterfly, fixed order)
// and group 0 writes the row.
template <typename T, int kChunksPerLane>
__global__ void __launch_bounds__(kWarp* kPairsPerBlock, kBlocksPerMultiprocessor)
    lane_group_attention_kernel(FusedAttentionArgs args, LaneGroups groups) {
  constexpr int kElements = kChunkBytes / static_cast<int>(sizeof(T));
  extern __shared__ float shared[];
  const int warp = static_cast<int>(threadIdx.x) / kWarp;
  const int lane = static_cast<int>(threadIdx.x) % kWarp;
  const long pair = static_cast<long>(blockIdx.x) * kPairsPerBlock + warp;
  if (pair >= static_cast<long>(args.rows) * args.heads) return;  // whole warps; no block sync
  const AttentionHead<T> at(args, pair);
  const int head_dim = args.head_dim;
  const int k = at.k;
  const int width = at.width;
  const bool key_term = at.key_term;
  const bool value_term = at.value_term;
  const int group = lane / groups.lanes;
  const int member = lane % groups.lanes;
  const int group_count = kWarp / groups.lanes;

  T* out = at.out;
  const bool out_vector = vector_aligned(out);
  const int count = at.count;
  if (count <= 0) {
    float zeros[kElements] = {};
    for (int i = 0; i < kChunksPerLane && group == 0; ++i) {
      const int c = member + i * groups.lanes;
      if (c < groups.chunks) store_chunk(out, c, head_dim, out_vector, zeros);
    }
    return;
  }
  const int position = at.position;
  float* key_terms = shared + warp * warp_floats(width);
  float* buckets = key_terms + width;
  float* tile_scores = buckets + width;

  float query[kChunksPerLane][kElements];
  {
    const T* q = at.query;
    const bool vector = vector_aligned(q);
#pragma unroll
    for (int i = 0; i < kChunksPerLane; ++i) {
      const int c = member + i * groups.lanes;
#pragma unroll
      for (int e = 0; e < kElements; ++e) query[i][e] = 0.0f;
      if (c < groups.chunks) load_chunk(q, c, head_dim, vector, query[i]);
#pragma unroll
      for (int e = 0; e < kElements; ++e) query[i][e] *= args.scale;
    }
  }
  // The query's dot product with a head row (a key or a table row), summed over the group;
  // every lane calls it (the group sum shuffles), lanes of a group without a row pass `has`
  // false.
  const auto dot = [&](const T* head_row, bool vector, bool has) {
    float sum = 0.0f;
#pragma unroll
    for (int i = 0; i < kChunksPerLane; ++i) {
      const int c = member + i * groups.lanes;
      if (!has || c >= groups.chunks) continue;
      float x[kElements];
      load_chunk(head_row, c, head_dim, vector, x);
#pragma unroll
      for (int e = 0; e < kElements; ++e) sum += query[i][e] * x[e];
    }
    return group_sum(sum, groups.lanes);
  };
  // Adds weight x a head row's chunks to the lane's context.
  const auto add_row = [&](float(&context)[kChunksPerLane][kElements], const T* head_row,
                           bool vector, float weight) {
#pragma unroll
    for (int i = 0; i < kChunksPerLane; ++i) {
      const int c = member + i * groups.lanes;
      if (c >= groups.chunks) continue;
      float x[kElements];
      load_chunk(head_row, c, head_dim, vector, x);
#pragma unroll
      for (int e = 0; e < kElements; ++e) context[i][e] += weight * x[e];
    }
  };

  // Buckets r(pos, j) of keys 0..count-1 (r grows with j).
  const int low_bucket = k > 0 ? relative_index(position, 0, k) : 0;
  const int high_bucket = k > 0 ? relative_index(position, count - 1, k) : 0;
  const bool tables_vector = (static_cast<long>(head_dim) * sizeof(T)) % kChunkBytes == 0;
  if (key_term) {
    const T* table = static_cast<const T*>(args.relative_keys);
    const bool vector = tables_vector && vector_aligned(table);
    for (int first = low_bucket; first <= high_bucket; first += group_count) {
      const int b = first + group;
      const bool has = b <= high_bucket;
      const float term = dot(table + static_cast<long>(has ? b : 0) * head_dim, vector, has);
      if (has && member == 0) key_terms[b] = term;
    }
  }
  if (value_term) {
    for (int b = lane; b < width; b += kWarp) buckets[b] = 0.0f;
  }
  __syncwarp();

  const T* keys = at.keys;
  const T* values = at.values;
  const bool stride_vector =
      (static_cast<long>(args.position_stride) * sizeof(T)) % kChunkBytes == 0;
  const bool keys_vector = stride_vector && vector_aligned(keys);
  const bool values_vector = stride_vector && vector_aligned(values);

  OnlineSoftmax softmax;
  float context[kChunksPerLane][kElements];
#pragma unroll
  for (int i = 0; i < kChunksPerLane; ++i) {
#pragma unroll
    for (int e = 0; e < kElements; ++e) context[i][e] = 0.0f;
  }
  for (int first = 0; first < count; first += kWarp) {
    const int tile = min(kWarp, count - first);
    const int steps = (tile + group_count - 1) / group_count;  // the same for every lane
#pragma unroll 2
    for (int s = 0; s < steps; ++s) {
      const int t = s * group_count + group;  // < kWarp
      const bool has = t < tile;
      const float score = dot(
          keys + static_cast<long>(first + (has ? t : 0)) * args.position_stride, keys_vector, has);
      if (has && member == 0) tile_scores[t] = score;
    }
    __syncwarp();

    const int j = first + lane;
    const bool valid = lane < tile;
    float score = -INFINITY;
    int bucket = 0;
    if (valid) score = at.score(tile_scores[lane], j, key_terms, bucket);
    float correction = 0.0f;
    const float p = softmax.add_tile(score, valid, correction);
#pragma unroll
    for (int i = 0; i < kChunksPerLane; ++i) {
#pragma unroll
      for (int e = 0; e < kElements; ++e) context[i][e] *= correction;
    }
    if (value_term) add_bucket_weights(buckets, width, correction, p, valid, bucket, lane);

#pragma unroll 2
    for (int s = 0; s < steps; ++s) {
      const int t = s * group_count + group;
      const float weight = __shfl_sync(kFullMask, p, t);  // 0 past the tile
      if (t < tile) {
        add_row(context, values + static_cast<long>(first + t) * args.position_stride,
                values_vector, weight);
      }
    }
    __syncwarp();  // the next tile rewrites tile_scores
  }

  if (value_term) {
    const T* table = static_cast<const T*>(args.relative_values);
    const bool vector = tables_vector && vector_aligned(table);
    for (int b = low_bucket + group; b <= high_bucket; b += group_count) {
      add_row(context, table + static_cast<long>(b) * head_dim, vector, buckets[b]);
    }
  }
  for (int offset = groups.lanes; offset < kWarp; offset *= 2) {
#pragma unroll
    for (int i = 0; i < kChunksPerLane; ++i) {
#pragma unroll
      for (int e = 0; e < kElements; ++e) {
        context[i][e] += __shfl_xor_sync(kFullMask, context[i][e], offset);
      }
    }
  }
  if (group != 0) return;
  const float inverse = 1.0f / softmax.normaliser;
#pragma unroll
  for (int i = 0; i < kChunksPerLane; ++i) {
    const int c = member + i * groups.lanes;
    if (c >= groups.chunks) continue;
#pragma unroll
    for (int e = 0; e < kElements; ++e) context[i][e] *= inverse;
    store_chunk(out, c, head_dim, out_vector, context[i]);
  }
}

LaneGroups lane_groups_for(int head_dim, int element_bytes) {
  const int elements = kChunkBytes / element_bytes;
  LaneGroups groups;
  groups.chunks = (head_dim + elements - 1) / elements;
  groups.lanes = 1;
  while (groups.lanes < groups.chunks && groups.lanes < kWarp) groups.lanes *= 2;
  return groups;
}

}  // namespace

std::size_t lane_group_attention_shared_bytes(int max_relative_position) {
  return sizeof(float) * kPairsPerBlock *
         static_cast<std::size_t>(warp_floats(2 * max_relative_position + 1));
}

void lane_group_attention_cuda(const FusedAttentionArgs& args, CudaStream stream) {
  const long pairs = static_cast<long>(args.rows) * args.heads;
  const auto blocks = static_cast<unsigned>((pairs + kPairsPerBlock - 1) / kPairsPerBlock);
  const std::size_t shared_bytes = lane_group_attention_shared_bytes(args.max_relative_position);
  dispatch_precision(args.precision, [&](auto tag) {
    using T = decltype(tag);
    const LaneGroups groups = lane_groups_for(args.head_dim, static_cast<int>(sizeof(T)));
    // Float32 heads over 128 dims have more chunks than lanes: two per lane (16-bit ones never
    // do: head_dim <= 256).
    if constexpr (sizeof(T) == 4) {
      if (groups.chunks > kWarp) {
        lane_group_attention_kernel<T, 2>
            <<<blocks, kWarp * kPairsPerBlock, shared_bytes, stream>>>(args, groups);
        return;
      }
    }
    lane_group_attention_kernel<T, 1>
        <<<blocks, kWarp * kPairsPerBlock, shared_bytes, stream>>>(args, groups);
  });
  RPT_CUDA_CHECK_LAUNCH();
}

}  // namespace rpt::kernels
