#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/position.h"
#include "kernels/relative_softmax.h"

namespace rpt::kernels {
namespace {

// Adds P[i, r(i, j)] to a row: keys left of the window share r = 0, keys right of it r = 2k.
void add_key_term(float* row, int keys, int position, const float* p, int k) {
  const int left_end = std::min(keys, std::max(0, position - k));         // j < position - k
  const int right_begin = std::max(0, std::min(keys, position + k + 1));  // j > position + k
  for (int j = 0; j < left_end; ++j) row[j] += p[0];
  for (int j = left_end; j < right_begin; ++j) row[j] += p[j - position + k];
  for (int j = right_begin; j < keys; ++j) row[j] += p[2 * k];
}

void bucket_row(const float* alpha, int keys, int position, int k, float* sums) {
  std::fill(sums, sums + 2 * k + 1, 0.0f);
  for (int j = 0; j < keys; ++j) sums[relative_index(position, j, k)] += alpha[j];
}

}  // namespace

void relative_softmax_cpu(const RelativeSoftmaxArgs& args) {
  const int k = args.max_relative_position;
  for (int i = 0; i < args.queries; ++i) {
    float* row = args.scores + static_cast<long>(i) * args.ld_scores;
    const int position = args.first_query_position + i;
    if (args.key_term != nullptr) {
      add_key_term(row, args.keys, position,
                   args.key_term + static_cast<long>(i) * args.ld_key_term, k);
    }
    if (args.offset_bias != nullptr) {
      for (int j = 0; j < args.keys; ++j) row[j] += args.offset_bias[j - position];
    }
    float max_value = -std::numeric_limits<float>::infinity();
    for (int j = 0; j < args.keys; ++j) max_value = std::max(max_value, row[j]);
    float sum = 0.0f;
    for (int j = 0; j < args.keys; ++j) {
      row[j] = std::exp(row[j] - max_value);
      sum += row[j];
    }
    const float inv_sum = 1.0f / sum;
    for (int j = 0; j < args.keys; ++j) row[j] *= inv_sum;
    if (args.bucket_sums != nullptr) {
      bucket_row(row, args.keys, position, k,
                 args.bucket_sums + static_cast<long>(i) * args.ld_bucket_sums);
    }
  }
}

}  // namespace rpt::kernels
