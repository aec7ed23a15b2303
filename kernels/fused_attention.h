// Fused multi-head attention with relative positions (docs/engine.md "Relative self-attention"),
// one pass per query row and head, memory linear in the sequence length (online softmax):
//
//   e_ij  = scale * q_i . k_j  +  scale * q_i . K_rel[r(i, j)]     (Shaw; r computed in-kernel)
//                              |  offset_bias[h, j - pos(i)]       (T5 bucket bias per offset)
//   alpha = softmax_j(e_ij) in float32, keys j in [0, key_count)
//   z_i   = sum_j alpha_ij v_j  +  sum_r A_ir V_rel[r],  A_ir = sum_{j: r(i,j) = r} alpha_ij
//
// One op for encoder self-attention, incremental decoder self-attention (a row reads its own
// cache) and cross-attention (beams read their sentence's memory): each query row names the
// sequence it reads by a base pointer, keys and values at fixed shifts from it. Why fused:
// docs/ARCHITECTURE.md "Design notes".
#pragma once

#include <cstdint>
#include <string_view>

#include "kernels/precision.h"
#include "kernels/stream.h"

namespace rpt::kernels {

struct FusedAttentionArgs {
  Precision precision = Precision::kFloat32;  // of queries, keys, values, tables and out
  int rows = 0;                               // query rows
  int heads = 0;
  int head_dim = 0;
  float scale = 1.0f;  // 1 / sqrt(head_dim)

  const void* queries = nullptr;  // [rows, heads * head_dim], row stride query_stride (elements)
  int query_stride = 0;

  // Row r's keys and values: position j, head h of the keys at
  //   sequences[r] + key_shift + j * position_stride + h * head_dim   (elements),
  // of the values at value_shift instead of key_shift.
  const void* const* sequences = nullptr;  // [rows] (device array for CUDA)
  std::int64_t key_shift = 0;
  std::int64_t value_shift = 0;
  int position_stride = 0;
  const int* key_counts = nullptr;  // [rows]: keys 0..count-1 are attended; 0: padding row
  // [rows]: position of the query, against which key j (at position j) is related.
  const int* query_positions = nullptr;

  int max_relative_position = 0;          // k; 0: no Shaw term
  const void* relative_keys = nullptr;    // [2k+1, head_dim]
  const void* relative_values = nullptr;  // [2k+1, head_dim]; nullptr: no value term
  const float* offset_bias = nullptr;     // T5: [heads, offset_bias_width], float32, or nullptr
  int offset_bias_width = 0;              // odd; offset 0 at column (width - 1) / 2

  void* out = nullptr;  // [rows, heads * head_dim], row stride out_stride; padding rows get 0
  int out_stride = 0;
};

// How the GPU spreads one (query row, head)'s work (ComputeOptions::gpu_attention). Either
// computes every row on its own, in an order fixed by the shape (batch-invariant).
enum class CudaAttentionKernel {
  // A block of 4 warps per (row, head), each taking every 4th tile of 32 keys, a lane per key
  // reading the whole key; warp 0 merges the four partial sums.
  kKeySplit,
  // A warp per (row, head), 4 per block; a group of lanes per key, each lane a 16-byte chunk of
  // it (coalesced loads), the groups splitting a tile's keys and values. Sized for decoding:
  // few keys per row, many rows.
  kLaneGroups,
};
inline std::string_view cuda_attention_kernel_name(CudaAttentionKernel kernel) {
  return kernel == CudaAttentionKernel::kLaneGroups ? "lane-groups" : "key-split";
}

inline constexpr int kMaxCudaAttentionHeadDim = 256;

// The CPU engine computes attention its own way (engine/cpu/attention.h); the definition this
// kernel is tested against is tests/support/reference_kernels.h's reference_fused_attention.
// Keys in tiles of 32 with an online softmax; head_dim <= kMaxCudaAttentionHeadDim.
void fused_attention_cuda(const FusedAttentionArgs& args, CudaStream stream,
                          CudaAttentionKernel kernel = CudaAttentionKernel::kKeySplit);
// Throws InvalidArgument when fused_attention_cuda cannot run a head size with relative positions
// up to k (head_dim over 256, or the query and relative terms over 48 KiB of shared memory):
// a CUDA engine checks its model's stacks when it is created, not at the first launch.
void check_fused_attention_cuda_shape(int head_dim, int max_relative_position);

}  // namespace rpt::kernels
