#include "engine/cpu/attention.h"

#include <algorithm>
#include <cmath>

#include "engine/scratch.h"
#include "kernels/gemm.h"
#include "kernels/parallel.h"
#include "kernels/relative_softmax.h"

namespace rpt {
namespace {

// A decoder step's attention for one row and head: its dot products and weighted sums over
// `keys` cached positions (multiply-adds), plus the calls' fixed cost.
long attention_task_cost(int keys, int head_dim) { return 2L * keys * head_dim + 512; }

// Below two chunks of this (a few µs of work), one thread does the step's attention alone.
constexpr long kMinAttentionChunkCost = 1L << 14;

// The queries of `rows` tokens (row stride `stride`) divided by sqrt(head_dim) (unless the model
// reads its scores unscaled, as T5), copied out to a contiguous [rows, heads, head_dim] so that
// the key-term GEMM covers all rows and heads at once.
ScratchFloats scaled_queries(const float* queries, long stride, int rows,
                             const ArchitectureConfig& architecture) {
  const int d = architecture.attention_dim();
  ScratchFloats scaled(static_cast<std::size_t>(rows) * d);
  const float scale = std::sqrt(static_cast<float>(architecture.head_dim()));
  for (int r = 0; r < rows; ++r) {
    const float* q = queries + r * stride;
    float* out = scaled.data() + static_cast<long>(r) * d;
    if (architecture.scale_attention) {
      for (int i = 0; i < d; ++i) out[i] = q[i] / scale;
    } else {
      std::copy_n(q, d, out);
    }
  }
  return scaled;
}

// Relative position buffers for `rows` tokens: key term P and bucket sums A, both
// [rows, heads, 2k+1].
struct RelativeTerms {
  int k = 0;
  int width = 0;           // 2k + 1
  ScratchFloats key_term;  // the key-term GEMM writes it whole
  std::vector<float> bucket_sums;
};

RelativeTerms relative_terms(const SelfAttentionWeights& weights, const float* scaled_query,
                             int rows, int heads, int head_dim) {
  RelativeTerms terms;
  terms.k = weights.max_relative_position;
  if (terms.k == 0) return terms;
  terms.width = 2 * terms.k + 1;
  const int query_rows = rows * heads;
  terms.key_term.resize(static_cast<std::size_t>(query_rows) * terms.width);
  terms.bucket_sums.assign(static_cast<std::size_t>(query_rows) * terms.width, 0.0f);
  // P = (Q / sqrt(head_dim)) K_rel^T: [rows * heads, head_dim] x [head_dim, 2k+1], one GEMM.
  kernels::gemm_cpu({.transpose_b = true,
                     .m = query_rows,
                     .n = terms.width,
                     .k = head_dim,
                     .a = scaled_query,
                     .lda = head_dim,
                     .b = weights.relative_keys.data<float>(),
                     .ldb = head_dim,
                     .c = terms.key_term.data(),
                     .ldc = terms.width});
  return terms;
}

// context [rows * heads, head_dim] += A V_rel: [rows * heads, 2k+1] x [2k+1, head_dim].
void add_value_term(const SelfAttentionWeights& weights, const RelativeTerms& terms, int rows,
                    int heads, int head_dim, float* context) {
  if (terms.k == 0) return;
  kernels::gemm_cpu({.m = rows * heads,
                     .n = head_dim,
                     .k = terms.width,
                     .a = terms.bucket_sums.data(),
                     .lda = terms.width,
                     .b = weights.relative_values.data<float>(),
                     .ldb = head_dim,
                     .beta = 1.0f,
                     .c = context,
                     .ldc = head_dim});
}

kernels::RelativeSoftmaxArgs softmax_args(const SelfAttentionWeights& weights, RelativeTerms& terms,
                                          int token, int head, int heads, int query_position) {
  kernels::RelativeSoftmaxArgs args;
  args.first_query_position = query_position;
  if (terms.k > 0) {
    const long row = (static_cast<long>(token) * heads + head) * terms.width;
    args.key_term = terms.key_term.data() + row;
    args.ld_key_term = heads * terms.width;
    args.max_relative_position = terms.k;
    args.bucket_sums = terms.bucket_sums.data() + row;
    args.ld_bucket_sums = heads * terms.width;
  }
  if (weights.offset_bias.defined()) {
    const long width = weights.offset_bias.dim(1);
    args.offset_bias =
        weights.offset_bias.data<float>() + head * width + (width - 1) / 2;  // centre
  }
  return args;
}

}  // namespace

void self_attention_forward(const SelfAttentionWeights& weights,
                            const ArchitectureConfig& architecture, const float* qkv,
                            const std::vector<int>& offsets, float* context) {
  const int d = architecture.attention_dim();
  const int heads = architecture.heads;
  const int head_dim = architecture.head_dim();
  const int sequences = static_cast<int>(offsets.size()) - 1;
  const int tokens = offsets.back();
  int longest = 0;
  for (int b = 0; b < sequences; ++b) {
    longest = std::max(
        longest, offsets[static_cast<std::size_t>(b) + 1] - offsets[static_cast<std::size_t>(b)]);
  }
  const ScratchFloats scaled_query = scaled_queries(qkv, 3L * d, tokens, architecture);
  RelativeTerms terms = relative_terms(weights, scaled_query.data(), tokens, heads, head_dim);

  // Every (sequence, head) is independent, and writes its slice of context: one task each across
  // the CPU threads.
  kernels::parallel_for(static_cast<long>(sequences) * heads, 1,
                        [&](long first_task, long last_task) {
                          std::vector<float> scores(static_cast<std::size_t>(longest) * longest);
                          for (long task = first_task; task < last_task; ++task) {
                            const auto b = static_cast<std::size_t>(task / heads);
                            const int h = static_cast<int>(task % heads);
                            const int n = offsets[b + 1] - offsets[b];
                            const long first = offsets[b];
                            const float* q = scaled_query.data() + first * d + h * head_dim;
                            const float* k = qkv + first * 3 * d + d + h * head_dim;
                            const float* v = qkv + first * 3 * d + 2 * d + h * head_dim;
                            // scores [n, n] = q [n, head_dim] k^T
                            kernels::gemm_cpu({.transpose_b = true,
                                               .m = n,
                                               .n = n,
                                               .k = head_dim,
                                               .a = q,
                                               .lda = d,
                                               .b = k,
                                               .ldb = 3 * d,
                                               .c = scores.data(),
                                               .ldc = n});
                            kernels::RelativeSoftmaxArgs args =
                                softmax_args(weights, terms, static_cast<int>(first), h, heads, 0);
                            args.scores = scores.data();
                            args.queries = n;
                            args.keys = n;
                            args.ld_scores = n;
                            kernels::relative_softmax_cpu(args);
                            // context [n, head_dim] = alpha [n, n] v
                            kernels::gemm_cpu({.m = n,
                                               .n = head_dim,
                                               .k = n,
                                               .a = scores.data(),
                                               .lda = n,
                                               .b = v,
                                               .ldb = 3 * d,
                                               .c = context + first * d + h * head_dim,
                                               .ldc = d});
                          }
                        });
  add_value_term(weights, terms, tokens, heads, head_dim, context);
}

StepAttentionPlan plan_step_attention(const ArchitectureConfig& architecture,
                                      const StepHistory& history,
                                      const std::vector<MemoryGroup>& groups) {
  const int heads = architecture.heads;
  const int head_dim = architecture.head_dim();
  const auto rows = static_cast<std::size_t>(history.rows());
  StepAttentionPlan plan;
  plan.self_costs.resize(rows * heads);
  plan.memory_group.assign(rows, -1);
  plan.cross_costs.assign(rows * heads, 0);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const MemoryGroup& group = groups[g];
    for (int r = group.first_row; r < group.first_row + group.rows; ++r) {
      plan.memory_group[static_cast<std::size_t>(r)] = static_cast<int>(g);
    }
  }
  for (std::size_t r = 0; r < rows; ++r) {
    const int group = plan.memory_group[r];
    const long self_cost = attention_task_cost(history.count(static_cast<long>(r)), head_dim);
    const long cross_cost =
        group < 0
            ? 0
            : attention_task_cost(groups[static_cast<std::size_t>(group)].memory_length, head_dim);
    std::fill_n(plan.self_costs.begin() + static_cast<long>(r * heads), heads, self_cost);
    std::fill_n(plan.cross_costs.begin() + static_cast<long>(r * heads), heads, cross_cost);
  }
  return plan;
}

void self_attention_step(const SelfAttentionWeights& weights,
                         const ArchitectureConfig& architecture, const float* qkv,
                         const StepHistory& history, const StepAttentionPlan& plan, int layer,
                         float* context) {
  const int d = architecture.attention_dim();
  const int heads = architecture.heads;
  const int head_dim = architecture.head_dim();
  const int rows = history.rows();
  const ScratchFloats scaled_query = scaled_queries(qkv, 3L * d, rows, architecture);
  RelativeTerms terms = relative_terms(weights, scaled_query.data(), rows, heads, head_dim);

  // (row, head) pairs are independent: each writes only its own head's slice of its row's new
  // position and of context.
  const long keys_offset = 2L * layer * d;  // within a position: this layer's keys, then values
  kernels::parallel_for_balanced(
      plan.self_costs, kMinAttentionChunkCost, [&](long first, long last) {
        std::vector<float> scores;
        for (long task = first; task < last; ++task) {
          const long r = task / heads;
          const int h = static_cast<int>(task % heads);
          const int positions = history.count(r);
          const int t = positions - 1;
          float* const* row_history = history.of(r);
          const long key_at = keys_offset + h * head_dim;
          const long value_at = key_at + d;
          const float* row_qkv = qkv + r * 3 * d + h * head_dim;
          std::copy_n(row_qkv + d, head_dim, row_history[t] + key_at);
          std::copy_n(row_qkv + 2 * d, head_dim, row_history[t] + value_at);
          scores.resize(static_cast<std::size_t>(positions));
          // scores [t + 1] = K [t + 1, head_dim] q
          kernels::gemv_cpu({.rows = positions,
                             .cols = head_dim,
                             .row_addresses = row_history,
                             .row_offset = key_at,
                             .x = scaled_query.data() + r * d + h * head_dim,
                             .y = scores.data()});
          kernels::RelativeSoftmaxArgs args =
              softmax_args(weights, terms, static_cast<int>(r), h, heads, t);
          args.scores = scores.data();
          args.queries = 1;
          args.keys = positions;
          args.ld_scores = positions;
          kernels::relative_softmax_cpu(args);
          // context [head_dim] = V^T alpha
          kernels::gemv_cpu({.transpose_a = true,
                             .rows = positions,
                             .cols = head_dim,
                             .row_addresses = row_history,
                             .row_offset = value_at,
                             .x = scores.data(),
                             .y = context + r * d + h * head_dim});
        }
      });
  add_value_term(weights, terms, rows, heads, head_dim, context);
}

void cross_attention_step(const ArchitectureConfig& architecture, const float* query,
                          const std::vector<MemoryGroup>& groups, const StepAttentionPlan& plan,
                          int layer, float* context) {
  const int d = architecture.attention_dim();
  const auto rows = static_cast<int>(plan.memory_group.size());
  const int heads = architecture.heads;
  const int head_dim = architecture.head_dim();
  const ScratchFloats scaled_query = scaled_queries(query, d, rows, architecture);

  // Each (row, head) of a row in a group writes its slice; a row no group covers keeps zeros.
  for (int r = 0; r < rows; ++r) {
    if (plan.memory_group[static_cast<std::size_t>(r)] < 0) {
      std::fill_n(context + static_cast<long>(r) * d, d, 0.0f);
    }
  }
  // (row, head) pairs are independent: one row and head at a time, as the beams of a sentence
  // are a handful of rows, where two GEMM calls per head cost more in the library than in
  // arithmetic (kernels/cpu/gemv_cpu.cc).
  const long keys_offset = 2L * layer * d;  // within a memory row: this layer's keys, then values
  kernels::parallel_for_balanced(
      plan.cross_costs, kMinAttentionChunkCost, [&](long first, long last) {
        std::vector<float> scores;
        for (long task = first; task < last; ++task) {
          const long r = task / heads;
          const int h = static_cast<int>(task % heads);
          const int g = plan.memory_group[static_cast<std::size_t>(r)];
          if (g < 0) continue;  // a row no group covers keeps a zero context
          const MemoryGroup* group = &groups[static_cast<std::size_t>(g)];
          const float* keys = group->keys_values + keys_offset;
          scores.resize(static_cast<std::size_t>(group->memory_length));
          const float* q = scaled_query.data() + r * d + h * head_dim;
          // scores [memory] = K [memory, head_dim] q
          kernels::gemv_cpu({.rows = group->memory_length,
                             .cols = head_dim,
                             .a = keys + h * head_dim,
                             .lda = group->row_stride,
                             .x = q,
                             .y = scores.data()});
          kernels::RelativeSoftmaxArgs args;
          args.scores = scores.data();
          args.queries = 1;
          args.keys = group->memory_length;
          args.ld_scores = group->memory_length;
          kernels::relative_softmax_cpu(args);
          // context [head_dim] = V^T alpha
          kernels::gemv_cpu({.transpose_a = true,
                             .rows = group->memory_length,
                             .cols = head_dim,
                             .a = keys + d + h * head_dim,
                             .lda = group->row_stride,
                             .x = scores.data(),
                             .y = context + r * d + h * head_dim});
        }
      });
}

}  // namespace rpt
