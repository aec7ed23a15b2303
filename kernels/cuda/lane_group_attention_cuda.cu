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
// Resident blocks asked of the compiler: 6 (80 registers a thread) keeps kBatch rows' loads in
// registers without spilling for 16-bit types and float32 heads up to 128 (sm_80, sm_90; 8
// blocks spilled ~100 bytes a thread); float32 heads over 128 spill ~100 bytes.
constexpr int kBlocksPerMultiprocessor = 6;
// Head rows (keys, values, table rows) a group reads at once: each lane's loads of all of them are
// issued before the first is used.
constexpr int kBatch = 4;

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

// Chunk c of a head's row (head_dim elements) as stored: one 16-byte read-only load where
// `vector` (the row 16-byte aligned, head_dim a whole number of chunks), else element by element
// with zeros past head_dim; zeros for a chunk past the row (c >= chunks). The same values either
// way, so sums do not depend on the alignment.
template <typename T>
__device__ __forceinline__ uint4 load_chunk(const T* row, int c, int chunks, int head_dim,
                                            bool vector) {
  constexpr int kElements = kChunkBytes / static_cast<int>(sizeof(T));
  uint4 raw = make_uint4(0, 0, 0, 0);  // zero bits: 0 in every precision
  if (c >= chunks) return raw;
  const int first = c * kElements;
  if (vector) return __ldg(reinterpret_cast<const uint4*>(row + first));
  T* elements = reinterpret_cast<T*>(&raw);
#pragma unroll
  for (int e = 0; e < kElements; ++e) {
    if (first + e < head_dim) elements[e] = row[first + e];
  }
  return raw;
}

template <typename T>
__device__ __forceinline__ float element(const uint4& raw, int e) {
  return to_float(reinterpret_cast<const T*>(&raw)[e]);
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

// A warp per (query row, head). The lane's chunks of the scaled query stay in registers. Rows
// are read kBatch at a time per group, every lane loading its chunks of all of them before
// summing any (the loads in flight together; rows past the end are clamped to a readable one and
// weigh nothing). The key term q . a_b is formed for the buckets the row's keys fall in
// (r(pos, 0) .. r(pos, count - 1): min(k, count - 1) + 1 of them for a decoder row). Keys go in
// tiles of 32: the groups take the tile's keys in turn, each key's dot summed over its group,
// the scores pass through shared memory to a lane per key for the online softmax
// (warp_math.cuh, as the key-split kernel), then the groups take the tile's values in turn, each
// lane adding weight x its chunks. At the end each group adds its share of the bucket weights x
// V_rel, the groups' partial contexts are summed (butterfly, fixed order) and group 0 writes the
// row.
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
  // 16-byte loads need whole chunks and aligned rows; else element by element (same values).
  const bool whole_chunks = head_dim % kElements == 0;

  float query[kChunksPerLane][kElements];
  {
    const bool vector = whole_chunks && vector_aligned(at.query);
#pragma unroll
    for (int i = 0; i < kChunksPerLane; ++i) {
      const uint4 raw =
          load_chunk(at.query, member + i * groups.lanes, groups.chunks, head_dim, vector);
#pragma unroll
      for (int e = 0; e < kElements; ++e) query[i][e] = element<T>(raw, e) * args.scale;
    }
  }
  // The lane's chunks of kBatch head rows, all loads issued before any is used.
  using Chunks = uint4[kBatch][kChunksPerLane];
  const auto load_rows = [&](const T* const(&rows)[kBatch], bool vector, Chunks& raw) {
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
#pragma unroll
      for (int i = 0; i < kChunksPerLane; ++i) {
        raw[b][i] = load_chunk(rows[b], member + i * groups.lanes, groups.chunks, head_dim, vector);
      }
    }
  };
  // The query's dot products with kBatch head rows, each summed over its group. Every lane calls
  // it (the group sums shuffle).
  const auto dots = [&](const T* const(&rows)[kBatch], bool vector, float(&sums)[kBatch]) {
    Chunks raw;
    load_rows(rows, vector, raw);
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      float sum = 0.0f;
#pragma unroll
      for (int i = 0; i < kChunksPerLane; ++i) {
#pragma unroll
        for (int e = 0; e < kElements; ++e) sum += query[i][e] * element<T>(raw[b][i], e);
      }
      sums[b] = sum;
    }
#pragma unroll
    for (int b = 0; b < kBatch; ++b) sums[b] = group_sum(sums[b], groups.lanes);
  };
  // context += weights[b] x the lane's chunks of rows[b], in order of b.
  const auto add_rows = [&](float(&context)[kChunksPerLane][kElements],
                            const T* const(&rows)[kBatch], bool vector,
                            const float(&weights)[kBatch]) {
    Chunks raw;
    load_rows(rows, vector, raw);
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
#pragma unroll
      for (int i = 0; i < kChunksPerLane; ++i) {
#pragma unroll
        for (int e = 0; e < kElements; ++e) context[i][e] += weights[b] * element<T>(raw[b][i], e);
      }
    }
  };

  // Buckets r(pos, j) of keys 0..count-1 (r grows with j); a group's b-th bucket of a batch
  // starting at `first` is first + b * group_count + group.
  const int low_bucket = k > 0 ? relative_index(position, 0, k) : 0;
  const int high_bucket = k > 0 ? relative_index(position, count - 1, k) : 0;
  const auto bucket_rows = [&](const T* table, int first, const T*(&rows)[kBatch]) {
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      const int bucket = min(first + b * group_count + group, high_bucket);
      rows[b] = table + static_cast<long>(bucket) * head_dim;
    }
  };
  if (at.key_term) {
    const T* table = static_cast<const T*>(args.relative_keys);
    const bool vector = whole_chunks && vector_aligned(table);
    for (int first = low_bucket; first <= high_bucket; first += group_count * kBatch) {
      const T* rows[kBatch];
      bucket_rows(table, first, rows);
      float terms[kBatch];
      dots(rows, vector, terms);
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        const int bucket = first + b * group_count + group;
        if (bucket <= high_bucket && member == 0) key_terms[bucket] = terms[b];
      }
    }
  }
  if (at.value_term) {
    for (int b = lane; b < width; b += kWarp) buckets[b] = 0.0f;
  }
  __syncwarp();

  const bool stride_vector =
      whole_chunks && (static_cast<long>(args.position_stride) * sizeof(T)) % kChunkBytes == 0;
  const bool keys_vector = stride_vector && vector_aligned(at.keys);
  const bool values_vector = stride_vector && vector_aligned(at.values);

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
    // The tile's key t = step * group_count + group, held to the tile for reading.
    const auto tile_rows = [&](const T* sequence, int step, const T*(&rows)[kBatch]) {
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        const int t = min((step + b) * group_count + group, tile - 1);
        rows[b] = sequence + static_cast<long>(first + t) * args.position_stride;
      }
    };
    for (int step = 0; step < steps; step += kBatch) {
      const T* rows[kBatch];
      tile_rows(at.keys, step, rows);
      float scores[kBatch];
      dots(rows, keys_vector, scores);
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        const int t = (step + b) * group_count + group;
        if (t < tile && member == 0) tile_scores[t] = scores[b];
      }
    }
    __syncwarp();

    const bool valid = lane < tile;
    float score = -INFINITY;
    int bucket = 0;
    if (valid) score = at.score(tile_scores[lane], first + lane, key_terms, bucket);
    float correction = 0.0f;
    const float p = softmax.add_tile(score, valid, correction);
#pragma unroll
    for (int i = 0; i < kChunksPerLane; ++i) {
#pragma unroll
      for (int e = 0; e < kElements; ++e) context[i][e] *= correction;
    }
    if (at.value_term) add_bucket_weights(buckets, width, correction, p, valid, bucket, lane);

    for (int step = 0; step < steps; step += kBatch) {
      const T* rows[kBatch];
      tile_rows(at.values, step, rows);
      float weights[kBatch];
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        const int t = (step + b) * group_count + group;
        const float weight = __shfl_sync(kFullMask, p, min(t, kWarp - 1));
        weights[b] = t < tile ? weight : 0.0f;
      }
      add_rows(context, rows, values_vector, weights);
    }
    __syncwarp();  // the next tile rewrites tile_scores
  }

  if (at.value_term) {
    const T* table = static_cast<const T*>(args.relative_values);
    const bool vector = whole_chunks && vector_aligned(table);
    for (int first = low_bucket; first <= high_bucket; first += group_count * kBatch) {
      const T* rows[kBatch];
      bucket_rows(table, first, rows);
      float weights[kBatch];
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        const int bucket = first + b * group_count + group;
        weights[b] = bucket <= high_bucket ? buckets[bucket] : 0.0f;
      }
      add_rows(context, rows, vector, weights);
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
    RPT_CHECK(groups.chunks <= 2 * kWarp && (sizeof(T) == 4 || groups.chunks <= kWarp),
              InvalidArgument, "lane-group attention: head_dim ", args.head_dim, " too wide");
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
