#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/errors.h"
#include "kernels/position.h"
#include "tests/support/reference_kernels.h"

namespace rpt::kernels {

void reference_fused_attention(const FusedAttentionArgs& args) {
  RPT_CHECK(args.precision == Precision::kFloat32, InvalidArgument,
            "reference_fused_attention computes in float32 only");
  const int k = args.max_relative_position;
  const int width = 2 * k + 1;
  const auto* queries = static_cast<const float*>(args.queries);
  const auto* relative_keys = static_cast<const float*>(args.relative_keys);
  const auto* relative_values = static_cast<const float*>(args.relative_values);
  auto* out = static_cast<float*>(args.out);
  std::vector<double> scores;
  std::vector<double> buckets(static_cast<std::size_t>(width));
  std::vector<double> context(static_cast<std::size_t>(args.head_dim));

  for (int row = 0; row < args.rows; ++row) {
    const int count = args.key_counts[row];
    const int position = args.query_positions[row];
    const auto* base = static_cast<const float*>(args.sequences[row]);
    for (int h = 0; h < args.heads; ++h) {
      float* z = out + static_cast<long>(row) * args.out_stride + h * args.head_dim;
      if (count == 0) {
        std::fill(z, z + args.head_dim, 0.0f);
        continue;
      }
      const float* q = queries + static_cast<long>(row) * args.query_stride + h * args.head_dim;
      auto dot = [&](const float* other) {
        double sum = 0.0;
        for (int i = 0; i < args.head_dim; ++i) sum += static_cast<double>(q[i]) * other[i];
        return sum * args.scale;
      };
      auto key = [&](int j) {
        return base + args.key_shift + static_cast<long>(j) * args.position_stride +
               h * args.head_dim;
      };
      auto value = [&](int j) {
        return base + args.value_shift + static_cast<long>(j) * args.position_stride +
               h * args.head_dim;
      };
      scores.assign(static_cast<std::size_t>(count), 0.0);
      double max_score = -INFINITY;
      for (int j = 0; j < count; ++j) {
        double s = dot(key(j));
        if (k > 0 && relative_keys != nullptr) {
          s += dot(relative_keys +
                   static_cast<long>(relative_index(position, j, k)) * args.head_dim);
        }
        if (args.offset_bias != nullptr) {
          const int centre = (args.offset_bias_width - 1) / 2;
          s += args.offset_bias[static_cast<long>(h) * args.offset_bias_width + centre + j -
                                position];
        }
        scores[static_cast<std::size_t>(j)] = s;
        max_score = std::max(max_score, s);
      }
      double total = 0.0;
      for (double& s : scores) total += (s = std::exp(s - max_score));
      std::fill(context.begin(), context.end(), 0.0);
      std::fill(buckets.begin(), buckets.end(), 0.0);
      for (int j = 0; j < count; ++j) {
        const double alpha = scores[static_cast<std::size_t>(j)] / total;
        const float* v = value(j);
        for (int i = 0; i < args.head_dim; ++i)
          context[static_cast<std::size_t>(i)] += alpha * v[i];
        if (k > 0) buckets[static_cast<std::size_t>(relative_index(position, j, k))] += alpha;
      }
      if (k > 0 && relative_values != nullptr) {
        for (int b = 0; b < width; ++b) {
          const float* v = relative_values + static_cast<long>(b) * args.head_dim;
          for (int i = 0; i < args.head_dim; ++i) {
            context[static_cast<std::size_t>(i)] += buckets[static_cast<std::size_t>(b)] * v[i];
          }
        }
      }
      for (int i = 0; i < args.head_dim; ++i)
        z[i] = static_cast<float>(context[static_cast<std::size_t>(i)]);
    }
  }
}

}  // namespace rpt::kernels
