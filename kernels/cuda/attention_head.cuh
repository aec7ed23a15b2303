// Where one (query row, head) of a fused attention call (kernels/fused_attention.h) reads and
// writes, for the CUDA attention kernels.
#pragma once

#include "kernels/fused_attention.h"
#include "kernels/position.h"

namespace rpt::kernels {

template <typename T>
struct AttentionHead {
  // Pair p is row p / heads, head p % heads. Positions and sequences are read only for rows with
  // keys (count > 0).
  __device__ AttentionHead(const FusedAttentionArgs& args, long pair)
      : row(static_cast<int>(pair / args.heads)),
        head(static_cast<int>(pair % args.heads)),
        k(args.max_relative_position),
        width(2 * args.max_relative_position + 1),
        key_term(args.max_relative_position > 0 && args.relative_keys != nullptr),
        value_term(args.max_relative_position > 0 && args.relative_values != nullptr),
        count(args.key_counts[row]) {
    const long head_offset = static_cast<long>(head) * args.head_dim;
    out = static_cast<T*>(args.out) + static_cast<long>(row) * args.out_stride + head_offset;
    if (count <= 0) return;
    position = args.query_positions[row];
    query = static_cast<const T*>(args.queries) + static_cast<long>(row) * args.query_stride +
            head_offset;
    const T* base = static_cast<const T*>(args.sequences[row]) + head_offset;
    keys = base + args.key_shift;
    values = base + args.value_shift;
    if (args.offset_bias != nullptr) {  // key j's bias: offset j - position's
      bias = args.offset_bias + static_cast<long>(head) * args.offset_bias_width;
      bias_shift = (args.offset_bias_width - 1) / 2 - position;
    }
  }

  // Key j's score from its product with the scaled query: plus the Shaw key term of its bucket
  // r(position, j) (key_terms [2k+1], set in `bucket`; 0 without Shaw terms) and T5's bias.
  __device__ __forceinline__ float score(float dot, int j, const float* key_terms,
                                         int& bucket) const {
    bucket = k > 0 ? relative_index(position, j, k) : 0;
    if (key_term) dot += key_terms[bucket];
    if (bias != nullptr) dot += bias[bias_shift + j];
    return dot;
  }

  int row, head;
  int k, width;     // Shaw's k and its table's rows, 2k + 1
  bool key_term;    // q . K_rel[r] added to the scores
  bool value_term;  // sum_r A_r V_rel[r] added to the context
  int count;        // keys 0..count-1; 0: a padding row, whose output is zeros
  T* out = nullptr;
  int position = 0;
  const T* query = nullptr;
  const T* keys = nullptr;  // key j at keys + j * position_stride
  const T* values = nullptr;
  const float* bias = nullptr;  // T5: the head's offset biases (offset 0 at the centre), or null
  int bias_shift = 0;           // key j's bias at bias[bias_shift + j]
};

}  // namespace rpt::kernels
