// The CPU GEMM against a float64 loop: few rows and many, odd widths (their last column comes
// from dot products), every transpose combination, padded leading dimensions, alpha and beta,
// serial and split across threads; within 5x the float32 rounding expected of k additions
// (observed: 1.34x). Row invariance: gemm_invariance_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/gemm.h"
#include "kernels/parallel.h"

namespace rpt::kernels {
namespace {

struct Shape {
  int m, n, k;
};

struct Reference {
  std::vector<double> c;
  // Per element, the float32 rounding a GEMM may add: sqrt(k) eps |alpha| ||a_i . b_j||_2 (the
  // random-walk size of k rounded additions of these products) plus eps of the result.
  std::vector<double> rounding;
};

// C = alpha op(A) op(B) + beta C in float64, A and B stored row-major with the given strides.
Reference reference(const GemmArgs& args, const std::vector<float>& c_before) {
  Reference out{.c = {c_before.begin(), c_before.end()},
                .rounding = std::vector<double>(c_before.size(), 0.0)};
  const double eps = std::numeric_limits<float>::epsilon();
  for (int i = 0; i < args.m; ++i) {
    for (int j = 0; j < args.n; ++j) {
      double sum = 0.0;
      double squares = 0.0;
      for (int p = 0; p < args.k; ++p) {
        const float a = args.transpose_a ? args.a[p * args.lda + i] : args.a[i * args.lda + p];
        const float b = args.transpose_b ? args.b[j * args.ldb + p] : args.b[p * args.ldb + j];
        const double product = static_cast<double>(a) * b;
        sum += product;
        squares += product * product;
      }
      const std::size_t at = static_cast<std::size_t>(i) * args.ldc + j;
      double& c = out.c[at];
      c = args.alpha * sum + (args.beta == 0.0f ? 0.0 : args.beta * c);
      out.rounding[at] = eps * (std::sqrt(args.k * squares) * std::abs(args.alpha) + std::abs(c));
    }
  }
  return out;
}

TEST(GemmCpu, MatchesFloat64ForFewAndManyRowsAndEveryTranspose) {
  std::mt19937 random(5);
  std::normal_distribution<float> normal;
  // Few rows through many, k above and below 512, a vocabulary-sized n that the threads split by
  // columns, and m > n that they split by rows.
  const Shape shapes[] = {{1, 33, 17},   {4, 700, 256}, {8, 96, 1024},  {32, 70, 300},
                          {16, 40, 600}, {17, 50, 64},  {40, 2000, 96}, {300, 20, 48},
                          {4, 33, 0},    {40, 20, 0}};  // k = 0: C = beta C
  double worst = 0.0;  // largest error in units of the expected rounding
  for (const int threads : {1, 2}) {
    set_cpu_threads(threads);
    for (const Shape& s : shapes) {
      for (const bool ta : {false, true}) {
        for (const bool tb : {false, true}) {
          for (const float beta : {0.0f, 1.0f}) {
            const int pad = 3;  // leading dimensions wider than the matrices
            const int lda = (ta ? s.m : s.k) + pad;
            const int ldb = (tb ? s.k : s.n) + pad;
            const int ldc = s.n + pad;
            std::vector<float> a(static_cast<std::size_t>(ta ? s.k : s.m) * lda);
            std::vector<float> b(static_cast<std::size_t>(tb ? s.n : s.k) * ldb);
            std::vector<float> c(static_cast<std::size_t>(s.m) * ldc);
            for (float& x : a) x = normal(random);
            for (float& x : b) x = normal(random);
            // beta 0 must overwrite C, NaN included.
            for (float& x : c) {
              x = beta == 0.0f ? std::numeric_limits<float>::quiet_NaN() : normal(random);
            }
            const GemmArgs args{.transpose_a = ta,
                                .transpose_b = tb,
                                .m = s.m,
                                .n = s.n,
                                .k = s.k,
                                .alpha = 0.5f,
                                .a = a.data(),
                                .lda = lda,
                                .b = b.data(),
                                .ldb = ldb,
                                .beta = beta,
                                .c = c.data(),
                                .ldc = ldc};
            std::vector<float> before = c;
            if (beta == 0.0f) std::fill(before.begin(), before.end(), 0.0f);
            const Reference expected = reference(args, before);
            gemm_cpu(args);
            const std::string what = "m " + std::to_string(s.m) + " n " + std::to_string(s.n) +
                                     " k " + std::to_string(s.k) + " ta " + std::to_string(ta) +
                                     " tb " + std::to_string(tb) + " beta " + std::to_string(beta) +
                                     " threads " + std::to_string(threads);
            for (int i = 0; i < s.m; ++i) {
              for (int j = 0; j < s.n; ++j) {
                const std::size_t at = static_cast<std::size_t>(i) * ldc + j;
                worst = std::max(worst, std::abs(c[at] - expected.c[at]) / expected.rounding[at]);
                ASSERT_NEAR(c[at], expected.c[at], 5 * expected.rounding[at] + 1e-30)
                    << what << " at (" << i << ", " << j << ")";
              }
              // The padding between rows of C is never written.
              for (int j = s.n; j < ldc && i + 1 < s.m; ++j) {
                const std::size_t at = static_cast<std::size_t>(i) * ldc + j;
                if (beta == 0.0f) {
                  ASSERT_TRUE(std::isnan(c[at])) << what;
                } else {
                  ASSERT_EQ(c[at], before[at]) << what;
                }
              }
            }
          }
        }
      }
    }
  }
  set_cpu_threads(0);
  std::printf("[ gemm ] largest error: %.2f x the expected float32 rounding\n", worst);
}

}  // namespace
}  // namespace rpt::kernels
