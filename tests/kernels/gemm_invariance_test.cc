// Batch invariance of the CPU GEMM: for a given B (and n, k, transposes), row i of C is bitwise
// the same whatever m is, whatever the other rows of A hold and whatever the thread count, at the
// shapes the engine multiplies (linear layers, attention's relative terms and products). Each row
// computed alone, on one thread, is the reference for every m from 1 to 300, on 1 and 2 threads.
#include <gtest/gtest.h>

#include <cctype>
#include <cstring>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "kernels/gemm.h"
#include "kernels/parallel.h"

namespace rpt::kernels {
namespace {

struct Product {
  const char* what;
  int n, k;
  bool transpose_a = false;
  bool transpose_b = false;
  float beta = 0.0f;
};

void PrintTo(const Product& product, std::ostream* out) { *out << product.what; }

// d_model 256, d_ff 1024, 4 heads of 64, relative width 2k+1 = 33, an 8,000-token vocabulary;
// memory lengths 21 and 150 (odd and even widths, k under and over BLIS's smallest k block).
const Product kProducts[] = {
    {"qkv projection", 768, 256, false, true},
    {"output projection", 256, 256, false, true},
    {"cross-attention keys and values", 512, 256, false, true},
    {"feed-forward inner", 1024, 256, false, true},
    {"feed-forward outer", 256, 1024, false, true},
    {"generator", 8000, 256, false, true},
    {"relative key term", 33, 64, false, true},
    {"relative value term", 64, 33, false, false, 1.0f},
    {"scores, 21 keys", 21, 64, false, true},
    {"scores, 150 keys", 150, 64, false, true},
    {"context, 21 keys", 64, 21, false, false},
    {"context, 150 keys", 64, 150, false, false, 1.0f},
    {"transposed A", 37, 150, true, false},
};

std::vector<int> row_counts() {
  std::vector<int> counts;
  for (int m = 1; m <= 40; ++m) counts.push_back(m);
  for (const int m : {47, 64, 65, 100, 127, 128, 129, 200, 255, 256, 300}) counts.push_back(m);
  return counts;
}

constexpr int kMaxRows = 300;

class GemmInvariance : public ::testing::TestWithParam<Product> {
 protected:
  void TearDown() override { set_cpu_threads(0); }
};

TEST_P(GemmInvariance, EachRowIsTheSameWhateverTheRowCountAndThreads) {
  const Product& p = GetParam();
  std::mt19937 random(11);
  std::normal_distribution<float> normal;
  // op(A) [kMaxRows, k]; stored [k, kMaxRows] when transposed. op(B) [k, n].
  const int lda = p.transpose_a ? kMaxRows : p.k;
  const int ldb = p.transpose_b ? p.k : p.n;
  std::vector<float> a(static_cast<std::size_t>(kMaxRows) * p.k);
  std::vector<float> b(static_cast<std::size_t>(p.n) * p.k);
  std::vector<float> c_before(static_cast<std::size_t>(kMaxRows) * p.n);
  for (float& x : a) x = normal(random);
  for (float& x : b) x = normal(random);
  for (float& x : c_before) x = normal(random);
  const auto args = [&](int first_row, int m, float* c) {
    return GemmArgs{
        .transpose_a = p.transpose_a,
        .transpose_b = p.transpose_b,
        .m = m,
        .n = p.n,
        .k = p.k,
        .a = p.transpose_a ? a.data() + first_row : a.data() + static_cast<long>(first_row) * lda,
        .lda = lda,
        .b = b.data(),
        .ldb = ldb,
        .beta = p.beta,
        .c = c + static_cast<long>(first_row) * p.n,
        .ldc = p.n};
  };

  set_cpu_threads(1);
  std::vector<float> alone = c_before;
  for (int i = 0; i < kMaxRows; ++i) gemm_cpu(args(i, 1, alone.data()));

  for (const int threads : {1, 2}) {
    set_cpu_threads(threads);
    std::string differing;  // "m=12: 3 rows" per row count that breaks the property
    for (const int m : row_counts()) {
      std::vector<float> c = c_before;
      gemm_cpu(args(0, m, c.data()));
      int rows = 0;
      for (int i = 0; i < m; ++i) {
        const std::size_t at = static_cast<std::size_t>(i) * p.n;
        rows += std::memcmp(c.data() + at, alone.data() + at, sizeof(float) * p.n) != 0;
      }
      if (rows > 0) differing += " m=" + std::to_string(m) + ": " + std::to_string(rows);
    }
    EXPECT_TRUE(differing.empty()) << p.what << " (n " << p.n << ", k " << p.k << "), " << threads
                                   << " threads, rows unlike alone at" << differing;
  }
}

std::string test_name(const ::testing::TestParamInfo<Product>& product) {
  std::string name = product.param.what;
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(EngineShapes, GemmInvariance, ::testing::ValuesIn(kProducts), test_name);

}  // namespace
}  // namespace rpt::kernels
