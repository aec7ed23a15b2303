// Relative position arithmetic shared by the CPU and CUDA kernels (host and device callable).
#pragma once

#ifdef __CUDACC__
#define RPT_HOST_DEVICE __host__ __device__
#else
#define RPT_HOST_DEVICE
#endif

namespace rpt::kernels {

// Shaw et al.: index into a [2k+1, d] table for query position i and key position j:
// clip(j - i, -k, k) + k.
RPT_HOST_DEVICE inline int relative_index(int query_position, int key_position, int k) {
  int distance = key_position - query_position;
  distance = distance < -k ? -k : (distance > k ? k : distance);
  return distance + k;
}

// T5 bucket of `relative_position` = key position - query position (HF T5Attention and
// OpenNMT-py's _relative_position_bucket). Bidirectional in encoders, causal in decoders.
int t5_bucket(int relative_position, bool bidirectional, int buckets, int max_distance);

}  // namespace rpt::kernels
