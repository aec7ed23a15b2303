// Fused log-softmax + top-k over the vocabulary (the beam search's per-step scan): for every
// row, the k most probable tokens and their log-probabilities, without writing the full
// log-softmax. Candidates come best first; equal log-probs go to the lower token id.
#pragma once

#include "kernels/stream.h"

namespace rpt::kernels {

struct TopKLogSoftmaxArgs {
  const float* logits = nullptr;  // [rows, vocab]
  int rows = 0;
  int vocab = 0;
  int k = 0;  // <= vocab
  // Per row, a token whose log-prob is forced to `blocked_log_prob` (EOS before min_length),
  // or -1; nullptr: none.
  const int* blocked_token = nullptr;  // [rows]
  float blocked_log_prob = -65504.0f;
  float* log_probs = nullptr;  // [rows, k]
  int* ids = nullptr;          // [rows, k]
};

void top_k_log_softmax_cpu(const TopKLogSoftmaxArgs& args);
// k rounds of a block-wide arg-max per row; meant for beam widths (k <= 64).
void top_k_log_softmax_cuda(const TopKLogSoftmaxArgs& args, CudaStream stream);

}  // namespace rpt::kernels
