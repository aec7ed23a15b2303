// The CPU KV cache ops on layouts small enough to check by hand, at 4-byte (float32) and 2-byte
// (float16) elements: the ops only move elements, so float16 is checked with integer bit
// patterns that name where each element came from.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <numeric>
#include <utility>
#include <vector>

#include "kernels/kv_cache.h"
#include "tests/support/reference_kernels.h"

namespace rpt::kernels {
namespace {

template <typename T>
constexpr Precision kPrecisionOf = sizeof(T) == 4 ? Precision::kFloat32 : Precision::kFloat16;

template <typename T>
class KvCacheTest : public ::testing::Test {
 protected:
  static constexpr Precision kPrecision = kPrecisionOf<T>;
  static constexpr T kUntouched = T(9999);

  // 1, 2, 3, ...: each element names its own index (plus one).
  static std::vector<T> numbered(std::size_t count) {
    std::vector<T> values(count);
    std::iota(values.begin(), values.end(), T(1));
    return values;
  }
  // `count` untouched elements with [begin, begin + values.size()) replaced by `values`.
  using Run = std::pair<int, std::vector<T>>;  // (first index, values)
  static std::vector<T> untouched_except(std::size_t count, std::initializer_list<Run> runs) {
    std::vector<T> out(count, kUntouched);
    for (const auto& [begin, values] : runs) {
      std::copy(values.begin(), values.end(), out.begin() + begin);
    }
    return out;
  }
  static std::vector<T> range(int first, int last) {  // first, ..., last
    std::vector<T> values;
    for (int v = first; v <= last; ++v) values.push_back(T(v));
    return values;
  }
};

using ElementTypes = ::testing::Types<float, std::uint16_t>;
TYPED_TEST_SUITE(KvCacheTest, ElementTypes);

TYPED_TEST(KvCacheTest, AppendWritesKeyAndValueAtEachRowsOwnPosition) {
  using T = TypeParam;
  // 2 layers, capacity 3, width 2: a position holds [k0 k1 v0 v1], a layer 12, a row 24.
  const CacheLayout layout{.layers = 2, .capacity = 3, .width = 2};
  ASSERT_EQ(layout.row_elements(), 24);
  // qkv rows of stride 7 (one padding column): row r column c holds 100 r + c + 1, so the key
  // is 100 r + {3, 4} and the value 100 r + {5, 6}.
  const int qkv_stride = 7;
  std::vector<T> qkv;
  for (int r = 0; r < 2; ++r) {
    for (int c = 0; c < qkv_stride; ++c) qkv.push_back(T(100 * r + c + 1));
  }
  const std::vector<int> positions = {0, 2};
  std::vector<T> cache(2 * 24, this->kUntouched);
  reference_cache_append({.precision = this->kPrecision,
                          .layout = layout,
                          .layer = 1,
                          .rows = 2,
                          .qkv = qkv.data(),
                          .qkv_stride = qkv_stride,
                          .positions = positions.data(),
                          .cache = cache.data()});
  // Row 0, layer 1, position 0: 0 + 12 + 0. Row 1, layer 1, position 2: 24 + 12 + 8.
  EXPECT_EQ(cache, this->untouched_except(48, {{12, {T(3), T(4), T(5), T(6)}},
                                               {44, {T(103), T(104), T(105), T(106)}}}));

  // The next step of row 0 (position 1, layer 0) leaves the earlier writes in place.
  const std::vector<int> next_positions = {1};
  reference_cache_append({.precision = this->kPrecision,
                          .layout = layout,
                          .layer = 0,
                          .rows = 1,
                          .qkv = qkv.data(),
                          .qkv_stride = qkv_stride,
                          .positions = next_positions.data(),
                          .cache = cache.data()});
  EXPECT_EQ(cache, this->untouched_except(48, {{4, {T(3), T(4), T(5), T(6)}},
                                               {12, {T(3), T(4), T(5), T(6)}},
                                               {44, {T(103), T(104), T(105), T(106)}}}));
}

TYPED_TEST(KvCacheTest, GatherCopiesParentPrefixesAndSkipsNewRows) {
  using T = TypeParam;
  const CacheLayout layout{.layers = 2, .capacity = 3, .width = 2};  // rows of 24
  const std::vector<T> in = this->numbered(3 * 24);                  // in element i holds i + 1
  // Beam reordering: two rows continue row 2 (at different lengths), one continues row 0, one
  // is a new sentence and keeps what it had.
  const std::vector<int> parents = {2, -1, 0, 2};
  const std::vector<int> lengths = {3, 2, 1, 2};
  std::vector<T> out(4 * 24, this->kUntouched);
  reference_cache_gather({.precision = this->kPrecision,
                          .layout = layout,
                          .rows = 4,
                          .in = in.data(),
                          .parents = parents.data(),
                          .lengths = lengths.data(),
                          .out = out.data()});
  EXPECT_EQ(out, this->untouched_except(
                     96, {// row 0 <- all of row 2 (in 48..71 holds 49..72)
                          {0, this->range(49, 72)},
                          // row 1 untouched; row 2 <- position 0 of row 0, layers 0 and 1
                          {48, this->range(1, 4)},
                          {60, this->range(13, 16)},
                          // row 3 <- positions 0 and 1 of row 2, layers 0 and 1
                          {72, this->range(49, 56)},
                          {84, this->range(61, 68)}}));
}

TYPED_TEST(KvCacheTest, ResizeGrowthKeepsEveryPositionAndShrinkKeepsThePrefix) {
  using T = TypeParam;
  // 2 rows, 2 layers, width 1: a position holds [k v]; capacity 2 -> 3.
  const CacheLayout small{.layers = 2, .capacity = 2, .width = 1};  // layers of 4, rows of 8
  const CacheLayout large{.layers = 2, .capacity = 3, .width = 1};  // layers of 6, rows of 12
  const std::vector<T> in = this->numbered(2 * 8);
  std::vector<T> grown(2 * 12, this->kUntouched);
  cache_resize_cpu({.precision = this->kPrecision,
                    .rows = 2,
                    .in_layout = small,
                    .in = in.data(),
                    .out_layout = large,
                    .out = grown.data()});
  EXPECT_EQ(grown, this->untouched_except(24, {{0, this->range(1, 4)},
                                               {6, this->range(5, 8)},
                                               {12, this->range(9, 12)},
                                               {18, this->range(13, 16)}}));

  // Back to capacity 2: the first two positions of every layer, i.e. the original cache.
  std::vector<T> shrunk(2 * 8, this->kUntouched);
  cache_resize_cpu({.precision = this->kPrecision,
                    .rows = 2,
                    .in_layout = large,
                    .in = grown.data(),
                    .out_layout = small,
                    .out = shrunk.data()});
  EXPECT_EQ(shrunk, in);
}

}  // namespace
}  // namespace rpt::kernels
