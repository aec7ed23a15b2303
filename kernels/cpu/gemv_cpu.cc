#include "kernels/gemm.h"

namespace rpt::kernels {
namespace {

// Eight float lanes in GCC/Clang vector types: FMA ymm code in the fma clone, SSE pairs in the
// baseline one. Each output's sum order is fixed by the shape alone, never by other rows. (Why
// own loops: docs/ARCHITECTURE.md "Design notes".) typedef, not `using`: clang applies aligned(4)
// to the vector only in this form.
typedef float Lanes __attribute__((vector_size(32)));
typedef float UnalignedLanes __attribute__((vector_size(32), aligned(4), may_alias));
constexpr int kLanes = 8;

// A vector of eight floats at any address; a cast, not a function, so that no vector crosses a
// call in the baseline clone (whose ABI passes them differently).
#define RPT_LANES_AT(pointer) (*reinterpret_cast<const UnalignedLanes*>(pointer))
#define RPT_LANE_SUM(v) ((v)[0] + (v)[1] + (v)[2] + (v)[3] + (v)[4] + (v)[5] + (v)[6] + (v)[7])

// Row j of A, strided or gathered.
inline const float* row_of(const GemvArgs& g, int j) {
  return g.row_addresses != nullptr ? g.row_addresses[j] + g.row_offset
                                    : g.a + static_cast<long>(j) * g.lda;
}

// y[j] = alpha * (a_j . x) + beta * y[j], four rows at a time (four independent sums).
__attribute__((target_clones("fma", "default"))) void row_dots(const GemvArgs& g) {
  const int vector_end = g.cols - g.cols % kLanes;
  const auto finish = [&](int j, float dot) {
    g.y[j] = g.alpha * dot + (g.beta == 0.0f ? 0.0f : g.beta * g.y[j]);
  };
  int j = 0;
  for (; j + 4 <= g.rows; j += 4) {
    const float* a0 = row_of(g, j);
    const float* a1 = row_of(g, j + 1);
    const float* a2 = row_of(g, j + 2);
    const float* a3 = row_of(g, j + 3);
    Lanes s0 = {}, s1 = {}, s2 = {}, s3 = {};
    for (int c = 0; c < vector_end; c += kLanes) {
      const Lanes x = RPT_LANES_AT(g.x + c);
      s0 += RPT_LANES_AT(a0 + c) * x;
      s1 += RPT_LANES_AT(a1 + c) * x;
      s2 += RPT_LANES_AT(a2 + c) * x;
      s3 += RPT_LANES_AT(a3 + c) * x;
    }
    float t0 = RPT_LANE_SUM(s0), t1 = RPT_LANE_SUM(s1), t2 = RPT_LANE_SUM(s2),
          t3 = RPT_LANE_SUM(s3);
    for (int c = vector_end; c < g.cols; ++c) {
      t0 += a0[c] * g.x[c];
      t1 += a1[c] * g.x[c];
      t2 += a2[c] * g.x[c];
      t3 += a3[c] * g.x[c];
    }
    finish(j, t0);
    finish(j + 1, t1);
    finish(j + 2, t2);
    finish(j + 3, t3);
  }
  for (; j < g.rows; ++j) {
    const float* a0 = row_of(g, j);
    Lanes s0 = {};
    for (int c = 0; c < vector_end; c += kLanes) s0 += RPT_LANES_AT(a0 + c) * RPT_LANES_AT(g.x + c);
    float t0 = RPT_LANE_SUM(s0);
    for (int c = vector_end; c < g.cols; ++c) t0 += a0[c] * g.x[c];
    finish(j, t0);
  }
}

// y[c] = alpha * sum_j x[j] a_j[c] + beta * y[c], 32 columns at a time (four accumulators held
// across all rows), then 8, then one.
__attribute__((target_clones("fma", "default"))) void weighted_row_sum(const GemvArgs& g) {
  const auto finish = [&](int c, float sum) {
    g.y[c] = g.alpha * sum + (g.beta == 0.0f ? 0.0f : g.beta * g.y[c]);
  };
  const auto finish_lanes = [&](int c, const Lanes& sum) {
    if (g.beta == 0.0f) {
      *reinterpret_cast<UnalignedLanes*>(g.y + c) = g.alpha * sum;
    } else {
      *reinterpret_cast<UnalignedLanes*>(g.y + c) = g.alpha * sum + g.beta * RPT_LANES_AT(g.y + c);
    }
  };
  constexpr int kChunk = 4 * kLanes;
  int c0 = 0;
  for (; c0 + kChunk <= g.cols; c0 += kChunk) {
    Lanes s0 = {}, s1 = {}, s2 = {}, s3 = {};
    for (int j = 0; j < g.rows; ++j) {
      const float* a = row_of(g, j) + c0;
      const float w = g.x[j];
      s0 += w * RPT_LANES_AT(a);
      s1 += w * RPT_LANES_AT(a + kLanes);
      s2 += w * RPT_LANES_AT(a + 2 * kLanes);
      s3 += w * RPT_LANES_AT(a + 3 * kLanes);
    }
    finish_lanes(c0, s0);
    finish_lanes(c0 + kLanes, s1);
    finish_lanes(c0 + 2 * kLanes, s2);
    finish_lanes(c0 + 3 * kLanes, s3);
  }
  for (; c0 + kLanes <= g.cols; c0 += kLanes) {
    Lanes s0 = {};
    for (int j = 0; j < g.rows; ++j) s0 += g.x[j] * RPT_LANES_AT(row_of(g, j) + c0);
    finish_lanes(c0, s0);
  }
  for (int c = c0; c < g.cols; ++c) {
    float sum = 0.0f;
    for (int j = 0; j < g.rows; ++j) sum += g.x[j] * row_of(g, j)[c];
    finish(c, sum);
  }
}

#undef RPT_LANES_AT
#undef RPT_LANE_SUM

}  // namespace

void gemv_cpu(const GemvArgs& args) {
  if (args.rows == 0 || args.cols == 0) return;
  if (args.transpose_a) {
    weighted_row_sum(args);
  } else {
    row_dots(args);
  }
}

}  // namespace rpt::kernels
