#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/position.h"
#include "kernels/relative_softmax.h"

namespace rpt::kernels {
namespace {

// Adds P[i, r(i, j)] to a row: keys left of the window share r = 0, keys right of it r = 2k.
void add_key_term(float* row, int keys, int position, const float* p, int k) {
  const int left_end = std::min(keys, std::max(0, position - k));  // j < position - k
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

void relative_softmax_batched_cpu(const BatchedRelativeSoftmaxArgs& args) {
  const int width = 2 * args.max_relative_position + 1;
  const long table_stride = static_cast<long>(args.heads) * width;
  for (int b = 0; b < args.batch; ++b) {
    const int keys = args.key_lengths[b];
    for (int h = 0; h < args.heads; ++h) {
      RelativeSoftmaxArgs block;
      block.scores = args.scores + (static_cast<long>(b) * args.heads + h) * args.queries *
                                       args.key_stride;
      block.queries = args.query_lengths ? args.query_lengths[b] : args.queries;
      block.keys = keys;
      block.ld_scores = args.key_stride;
      block.first_query_position = args.query_positions[b];
      block.max_relative_position = args.max_relative_position;
      const long first = static_cast<long>(b) * args.queries * table_stride + h * width;
      if (args.key_term != nullptr) {
        block.key_term = args.key_term + first;
        block.ld_key_term = static_cast<int>(table_stride);
      }
      if (args.bucket_sums != nullptr) {
        block.bucket_sums = args.bucket_sums + first;
        block.ld_bucket_sums = static_cast<int>(table_stride);
      }
      if (args.offset_bias != nullptr) {
        block.offset_bias = args.offset_bias + static_cast<long>(h) * args.offset_bias_width +
                            (args.offset_bias_width - 1) / 2;
      }
      relative_softmax_cpu(block);
    }
  }
}

}  // namespace rpt::kernels
