// The softmax of relation-aware self-attention (Shaw et al. 2018; DESIGN.md §3), for a block of
// query rows of one (sequence, head):
//
//   e_ij  = scores_ij + key_term[i, r(i, j)]        (relative: r computed here, no index matrix)
//         | scores_ij + offset_bias[j - pos(i)]     (T5 bucket bias, per-offset table)
//   alpha = softmax_j(e_ij) over the `keys` valid keys, float32
//   bucket_sums[i, r] = sum of alpha_ij over keys j with r(i, j) = r   (for the value term)
//
// The caller then adds bucket_sums x V_rel to alpha x V with one GEMM for all rows and heads.
#pragma once

#include "kernels/stream.h"

namespace rpt::kernels {

struct RelativeSoftmaxArgs {
  float* scores = nullptr;  // [queries, keys] scaled q.k, row stride ld_scores; becomes alpha
  int queries = 0;
  int keys = 0;  // valid keys; keys beyond are masked (not read, not written)
  int ld_scores = 0;
  int first_query_position = 0;  // position of query row 0 (t in incremental decoding)

  // Relative key term P = (q / sqrt(d)) K_rel^T: [queries, 2k+1], row stride ld_key_term.
  const float* key_term = nullptr;
  int ld_key_term = 0;
  int max_relative_position = 0;  // k

  // Output: [queries, 2k+1] row stride ld_bucket_sums; nullptr when there is no value term.
  float* bucket_sums = nullptr;
  int ld_bucket_sums = 0;

  // T5: bias for key position j and query position i is offset_bias[j - i] (the pointer is
  // centred at offset 0; valid from -(max_offset) to +max_offset).
  const float* offset_bias = nullptr;
};

void relative_softmax_cpu(const RelativeSoftmaxArgs& args);

// The same for every (sequence, head) of a padded batch at once: the shape the GPU runs.
struct BatchedRelativeSoftmaxArgs {
  float* scores = nullptr;  // [batch, heads, queries, key_stride]; becomes alpha
  int batch = 0;
  int heads = 0;
  int queries = 0;
  int key_stride = 0;
  const int* key_lengths = nullptr;      // [batch] valid keys of each sequence
  const int* query_lengths = nullptr;    // [batch] valid query rows; nullptr: all `queries`
  const int* query_positions = nullptr;  // [batch] position of query row 0 of each sequence
  int max_relative_position = 0;         // k; 0: no relative term
  const float* key_term = nullptr;       // [batch, queries, heads, 2k+1] or nullptr
  float* bucket_sums = nullptr;          // [batch, queries, heads, 2k+1] or nullptr
  const float* offset_bias = nullptr;    // T5: [heads, offset_bias_width] or nullptr
  int offset_bias_width = 0;             // odd; offset 0 at (width - 1) / 2
};

// Query rows past a sequence's query length (padding) are left untouched.
void relative_softmax_batched_cpu(const BatchedRelativeSoftmaxArgs& args);
void relative_softmax_batched_cuda(const BatchedRelativeSoftmaxArgs& args, CudaStream stream);

}  // namespace rpt::kernels
