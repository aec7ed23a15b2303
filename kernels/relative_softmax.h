// The softmax of relation-aware self-attention (Shaw et al. 2018; docs/engine.md), for a block of
// query rows of one (sequence, head):
//
//   e_ij  = scores_ij + key_term[i, r(i, j)]        (relative: r computed here, no index matrix)
//         | scores_ij + offset_bias[j - pos(i)]     (T5 bucket bias, per-offset table)
//   alpha = softmax_j(e_ij) over the `keys` valid keys, float32
//   bucket_sums[i, r] = sum of alpha_ij over keys j with r(i, j) = r   (for the value term)
//
// The caller then adds bucket_sums x V_rel to alpha x V with one GEMM for all rows and heads.
#pragma once

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

}  // namespace rpt::kernels
