// Warp-wide reductions for the attention kernels. Butterfly order: every lane ends with the same
// value, summed in a fixed order, so a row's result never depends on the rows launched beside it.
#pragma once

namespace rpt::kernels {

constexpr int kWarp = 32;
constexpr unsigned kFullMask = 0xffffffffu;

// Sums v over aligned groups of `lanes` lanes (a power of two <= 32); every lane of the warp
// must call it.
__device__ __forceinline__ float group_sum(float v, int lanes) {
  for (int offset = lanes / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(kFullMask, v, offset);
  return v;
}
__device__ __forceinline__ float warp_sum(float v) { return group_sum(v, kWarp); }
__device__ __forceinline__ float warp_max(float v) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) {
    v = fmaxf(v, __shfl_xor_sync(kFullMask, v, offset));
  }
  return v;
}

// One warp's online softmax over tiles of up to 32 keys, a key per lane: add_tile takes the
// lane's score (-inf where the lane has no key) and returns its weight exp(score - max) under
// the new running maximum; `correction` rescales what was summed under the old one (0 on the
// first tile).
struct OnlineSoftmax {
  float running_max = -INFINITY;
  float normaliser = 0.0f;

  __device__ __forceinline__ float add_tile(float score, bool valid, float& correction) {
    const float new_max = fmaxf(running_max, warp_max(score));  // finite: lane 0 has a key
    correction = expf(running_max - new_max);
    const float p = valid ? expf(score - new_max) : 0.0f;
    normaliser = normaliser * correction + warp_sum(p);
    running_max = new_max;
    return p;
  }
};

// The Shaw value term's bucket weights [width] in shared memory: rescaled by `correction`, then
// the tile's weights added, lane per key. Middle buckets receive at most one key of a tile
// (r = j - pos + k is one-to-one there); the two edge buckets get a warp sum.
__device__ __forceinline__ void add_bucket_weights(float* buckets, int width, float correction,
                                                   float p, bool valid, int bucket, int lane) {
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

}  // namespace rpt::kernels
