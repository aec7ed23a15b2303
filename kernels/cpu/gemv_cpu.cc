#include <algorithm>
#include <array>
#include <vector>

#include "kernels/cpu/vector_clones.h"
#include "kernels/gemm.h"

namespace rpt::kernels {
namespace {

// The decoder's self-attention calls gemv per row and head on short, thin matrices (t + 1 cached
// positions x head_dim 64): some 6,000 calls per step at batch 32, where a BLAS call's own
// overhead outweighed its arithmetic (7% of an int8 decode in OpenBLAS's sgemv). Plain loops the
// compiler vectorizes; each y[i] is summed in a fixed order from its own inputs only.
constexpr int kLanes = 8;

// sum_c a[c] x[c], over kLanes partial sums added in a fixed order.
RPT_VECTOR_CLONES float dot(const float* a, const float* x, int count) {
  std::array<float, kLanes> lanes{};
  int c = 0;
  for (; c + kLanes <= count; c += kLanes) {
    for (int j = 0; j < kLanes; ++j) lanes[static_cast<std::size_t>(j)] += a[c + j] * x[c + j];
  }
  float total = 0.0f;
  for (; c < count; ++c) total += a[c] * x[c];
  for (const float lane : lanes) total += lane;
  return total;
}

// sums[c] += weight * a[c]
RPT_VECTOR_CLONES void add_scaled(const float* a, float weight, int count, float* sums) {
  for (int c = 0; c < count; ++c) sums[c] += weight * a[c];
}

void store(float value, float alpha, float beta, float& y) {
  // beta 0 never reads y, which may hold anything (NaN included) before the call.
  y = beta == 0.0f ? alpha * value : alpha * value + beta * y;
}

}  // namespace

void gemv_cpu(const GemvArgs& args) {
  if (args.rows == 0 || args.cols == 0) return;
  if (!args.transpose_a) {
    for (int i = 0; i < args.rows; ++i) {
      store(dot(args.a + static_cast<long>(i) * args.lda, args.x, args.cols), args.alpha,
            args.beta, args.y[i]);
    }
    return;
  }
  thread_local std::vector<float> sums;  // y [cols] = A^T x, summed over rows in row order
  sums.assign(static_cast<std::size_t>(args.cols), 0.0f);
  for (int i = 0; i < args.rows; ++i) {
    add_scaled(args.a + static_cast<long>(i) * args.lda, args.x[i], args.cols, sums.data());
  }
  for (int c = 0; c < args.cols; ++c) {
    store(sums[static_cast<std::size_t>(c)], args.alpha, args.beta, args.y[c]);
  }
}

}  // namespace rpt::kernels
