// The KV cache ops on each device (tests/support/op_targets.h) at every element size: they only
// move elements, so each element is an integer naming where it came from (4-byte elements hold
// it, 2-byte ones its 16 bits) and every result is bit-exact. First layouts small enough to
// check by hand, then layouts whose copy units differ on the GPU against the per-element
// definition. On the CPU the ops are the references of tests/support/reference_kernels.h (the
// CPU engine keeps its cache as a position tree) and cache_resize_cpu.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <numeric>
#include <utility>
#include <vector>

#include "kernels/kv_cache.h"
#include "tests/support/op_targets.h"
#include "tests/support/reference_kernels.h"

namespace rpt::kernels {
namespace {

class KvCacheTest : public testing::OpTargetTest {
 protected:
  static constexpr int kUntouched = 9999;

  // first, first + 1, ...: each element names its own index (plus `first`).
  static std::vector<int> numbered(std::size_t count, int first = 1) {
    std::vector<int> values(count);
    std::iota(values.begin(), values.end(), first);
    return values;
  }
  // `count` untouched elements with [begin, begin + values.size()) replaced by `values`.
  using Run = std::pair<int, std::vector<int>>;  // (first index, values)
  static std::vector<int> untouched_except(std::size_t count, std::initializer_list<Run> runs) {
    std::vector<int> out(count, kUntouched);
    for (const auto& [begin, values] : runs) {
      std::copy(values.begin(), values.end(), out.begin() + begin);
    }
    return out;
  }
  static std::vector<int> range(int first, int last) {  // first, ..., last
    return numbered(static_cast<std::size_t>(last - first + 1), first);
  }

  // The ops on the target: the arrays' pointers and the precision filled in, the cache (or out)
  // read back.
  void append(CacheAppendArgs args, const std::vector<int>& qkv, const std::vector<int>& positions,
              std::vector<int>& cache) {
    Array d_qkv = elements(qkv), d_positions = ints(positions), d_cache = elements(cache);
    args.precision = precision();
    args.qkv = d_qkv.data();
    args.positions = d_positions.as<int>();
    args.cache = d_cache.data();
    run([&] { reference_cache_append(args); },
        [&](auto stream) { cache_append_cuda(args, stream); });
    cache = read_names(d_cache, cache.size());
  }
  void gather(CacheGatherArgs args, const std::vector<int>& in, const std::vector<int>& parents,
              const std::vector<int>& lengths, std::vector<int>& out) {
    Array d_in = elements(in), d_parents = ints(parents), d_lengths = ints(lengths),
          d_out = elements(out);
    args.precision = precision();
    args.in = d_in.data();
    args.parents = d_parents.as<int>();
    args.lengths = d_lengths.as<int>();
    args.out = d_out.data();
    run([&] { reference_cache_gather(args); },
        [&](auto stream) { cache_gather_cuda(args, stream); });
    out = read_names(d_out, out.size());
  }
  void resize(CacheResizeArgs args, const std::vector<int>& in, std::vector<int>& out) {
    Array d_in = elements(in), d_out = elements(out);
    args.precision = precision();
    args.in = d_in.data();
    args.out = d_out.data();
    run([&] { cache_resize_cpu(args); }, [&](auto stream) { cache_resize_cuda(args, stream); });
    out = read_names(d_out, out.size());
  }

 private:
  std::size_t element_size() const { return precision_size(precision()); }
  Array elements(const std::vector<int>& names) const {
    std::vector<std::byte> bytes(names.size() * element_size());
    for (std::size_t i = 0; i < names.size(); ++i) {
      const auto wide = static_cast<std::int32_t>(names[i]);
      const auto narrow = static_cast<std::uint16_t>(names[i]);
      std::memcpy(&bytes[i * element_size()],
                  element_size() == 4 ? static_cast<const void*>(&wide) : &narrow, element_size());
    }
    return raw(std::move(bytes), element_size());
  }
  std::vector<int> read_names(const Array& array, std::size_t count) const {
    const std::vector<std::byte> bytes = read_raw(array, count * element_size());
    std::vector<int> names(count);
    for (std::size_t i = 0; i < count; ++i) {
      std::int32_t wide = 0;
      std::uint16_t narrow = 0;
      std::memcpy(element_size() == 4 ? static_cast<void*>(&wide) : &narrow,
                  &bytes[i * element_size()], element_size());
      names[i] = element_size() == 4 ? wide : narrow;
    }
    return names;
  }
};

TEST_P(KvCacheTest, AppendWritesKeyAndValueAtEachRowsOwnPosition) {
  // 2 layers, capacity 3, width 2: a position holds [k0 k1 v0 v1], a layer 12, a row 24.
  const CacheLayout layout{.layers = 2, .capacity = 3, .width = 2};
  ASSERT_EQ(layout.row_elements(), 24);
  // qkv rows of stride 7 (one padding column): row r column c holds 100 r + c + 1, so the key
  // is 100 r + {3, 4} and the value 100 r + {5, 6}.
  const int qkv_stride = 7;
  std::vector<int> qkv;
  for (int r = 0; r < 2; ++r) {
    for (int c = 0; c < qkv_stride; ++c) qkv.push_back(100 * r + c + 1);
  }
  const std::vector<int> positions = {0, 2};
  std::vector<int> cache(2 * 24, kUntouched);
  append({.layout = layout, .layer = 1, .rows = 2, .qkv_stride = qkv_stride}, qkv, positions,
         cache);
  // Row 0, layer 1, position 0: 0 + 12 + 0. Row 1, layer 1, position 2: 24 + 12 + 8.
  EXPECT_EQ(cache, untouched_except(48, {{12, {3, 4, 5, 6}}, {44, {103, 104, 105, 106}}}));

  // The next step of row 0 (position 1, layer 0) leaves the earlier writes in place.
  const std::vector<int> next_positions = {1};
  append({.layout = layout, .layer = 0, .rows = 1, .qkv_stride = qkv_stride}, qkv, next_positions,
         cache);
  EXPECT_EQ(cache, untouched_except(
                       48, {{4, {3, 4, 5, 6}}, {12, {3, 4, 5, 6}}, {44, {103, 104, 105, 106}}}));
}

TEST_P(KvCacheTest, GatherCopiesParentPrefixesAndSkipsNewRows) {
  const CacheLayout layout{.layers = 2, .capacity = 3, .width = 2};  // rows of 24
  const std::vector<int> in = numbered(3 * 24);                      // in element i holds i + 1
  // Beam reordering: two rows continue row 2 (at different lengths), one continues row 0, one
  // is a new sentence and keeps what it had.
  const std::vector<int> parents = {2, -1, 0, 2};
  const std::vector<int> lengths = {3, 2, 1, 2};
  std::vector<int> out(4 * 24, kUntouched);
  gather({.layout = layout, .rows = 4}, in, parents, lengths, out);
  EXPECT_EQ(out,
            untouched_except(96, {// row 0 <- all of row 2 (in 48..71 holds 49..72)
                                  {0, range(49, 72)},
                                  // row 1 untouched; row 2 <- position 0 of row 0, layers 0 and 1
                                  {48, range(1, 4)},
                                  {60, range(13, 16)},
                                  // row 3 <- positions 0 and 1 of row 2, layers 0 and 1
                                  {72, range(49, 56)},
                                  {84, range(61, 68)}}));
}

TEST_P(KvCacheTest, ResizeGrowthKeepsEveryPositionAndShrinkKeepsThePrefix) {
  // 2 rows, 2 layers, width 1: a position holds [k v]; capacity 2 -> 3.
  const CacheLayout small{.layers = 2, .capacity = 2, .width = 1};  // layers of 4, rows of 8
  const CacheLayout large{.layers = 2, .capacity = 3, .width = 1};  // layers of 6, rows of 12
  const std::vector<int> in = numbered(2 * 8);
  std::vector<int> grown(2 * 12, kUntouched);
  resize({.rows = 2, .in_layout = small, .out_layout = large}, in, grown);
  EXPECT_EQ(grown,
            untouched_except(
                24, {{0, range(1, 4)}, {6, range(5, 8)}, {12, range(9, 12)}, {18, range(13, 16)}}));

  // Back to capacity 2: the first two positions of every layer, i.e. the original cache.
  std::vector<int> shrunk(2 * 8, kUntouched);
  resize({.rows = 2, .in_layout = large, .out_layout = small}, grown, shrunk);
  EXPECT_EQ(shrunk, in);
}

// Layouts whose copy units differ on the GPU: width 8 moves 16-byte units (8-byte ones at 2-byte
// elements), 4 at 2-byte elements 8-byte units, 3 the element itself.
struct CacheShape {
  CacheLayout layout;
  int qkv_stride;
};
constexpr CacheShape kCacheShapes[] = {{{.layers = 3, .capacity = 5, .width = 8}, 24},
                                       {{.layers = 2, .capacity = 5, .width = 4}, 12},
                                       {{.layers = 2, .capacity = 5, .width = 3}, 10}};

// The index of (row, layer, position, key 0 or value 1, column) in a cache of `layout`.
std::size_t element(const CacheLayout& layout, int row, int layer, int position, int kv,
                    int column) {
  return static_cast<std::size_t>(
      ((static_cast<long>(row) * layout.layers + layer) * layout.capacity + position) * 2 *
          layout.width +
      static_cast<long>(kv) * layout.width + column);
}

TEST_P(KvCacheTest, AppendAtEachRowsPositionInEveryCopyUnit) {
  for (const CacheShape& shape : kCacheShapes) {
    const CacheLayout& layout = shape.layout;
    SCOPED_TRACE(::testing::Message() << "width " << layout.width);
    const int rows = 4, layer = 1;
    const std::vector<int> positions = {0, 4, 2, 3};
    const auto qkv = numbered(static_cast<std::size_t>(rows) * shape.qkv_stride, 20001);
    auto cache = numbered(static_cast<std::size_t>(rows * layout.row_elements()));
    // cache[r, layer, positions[r]] = the key and value columns of qkv row r.
    auto expected = cache;
    for (int r = 0; r < rows; ++r) {
      for (int kv = 0; kv < 2; ++kv) {
        for (int c = 0; c < layout.width; ++c) {
          expected[element(layout, r, layer, positions[r], kv, c)] =
              qkv[static_cast<std::size_t>(r * shape.qkv_stride + (1 + kv) * layout.width + c)];
        }
      }
    }
    append({.layout = layout, .layer = layer, .rows = rows, .qkv_stride = shape.qkv_stride}, qkv,
           positions, cache);
    EXPECT_EQ(cache, expected);
  }
}

TEST_P(KvCacheTest, GatherBeamParentsAndNewRowsInEveryCopyUnit) {
  for (const CacheShape& shape : kCacheShapes) {
    const CacheLayout& layout = shape.layout;
    SCOPED_TRACE(::testing::Message() << "width " << layout.width);
    const int in_rows = 3, out_rows = 5;
    // Row 1 is a new sentence (untouched); rows 0 and 3 share a parent at different lengths.
    const std::vector<int> parents = {2, -1, 0, 2, 1};
    const std::vector<int> lengths = {5, 3, 1, 0, 4};
    const auto in = numbered(static_cast<std::size_t>(in_rows * layout.row_elements()));
    auto out = numbered(static_cast<std::size_t>(out_rows * layout.row_elements()), 10001);
    // out[r, l, p] = in[parents[r], l, p] for p < lengths[r], where parents[r] >= 0.
    auto expected = out;
    for (int r = 0; r < out_rows; ++r) {
      if (parents[r] < 0) continue;
      for (int l = 0; l < layout.layers; ++l) {
        for (int p = 0; p < lengths[r]; ++p) {
          for (int kv = 0; kv < 2; ++kv) {
            for (int c = 0; c < layout.width; ++c) {
              expected[element(layout, r, l, p, kv, c)] =
                  in[element(layout, parents[r], l, p, kv, c)];
            }
          }
        }
      }
    }
    gather({.layout = layout, .rows = out_rows}, in, parents, lengths, out);
    EXPECT_EQ(out, expected);
  }
}

TEST_P(KvCacheTest, ResizeGrowAndShrinkInEveryCopyUnit) {
  for (const CacheShape& shape : kCacheShapes) {
    for (const int new_capacity : {8, 2}) {
      const CacheLayout& layout = shape.layout;
      SCOPED_TRACE(::testing::Message()
                   << "width " << layout.width << " capacity " << new_capacity);
      const int rows = 3;
      CacheLayout out_layout = layout;
      out_layout.capacity = new_capacity;
      const auto in = numbered(static_cast<std::size_t>(rows * layout.row_elements()));
      auto out = numbered(static_cast<std::size_t>(rows * out_layout.row_elements()), 10001);
      // out[r, l, p] = in[r, l, p] for the positions both capacities hold.
      auto expected = out;
      for (int r = 0; r < rows; ++r) {
        for (int l = 0; l < layout.layers; ++l) {
          for (int p = 0; p < std::min(layout.capacity, new_capacity); ++p) {
            for (int kv = 0; kv < 2; ++kv) {
              for (int c = 0; c < layout.width; ++c) {
                expected[element(out_layout, r, l, p, kv, c)] = in[element(layout, r, l, p, kv, c)];
              }
            }
          }
        }
      }
      resize({.rows = rows, .in_layout = layout, .out_layout = out_layout}, in, out);
      EXPECT_EQ(out, expected);
    }
  }
}

// The ops only move elements: every device at every storage precision.
RPT_OP_TARGET_INSTANCES(KvCacheTest, testing::op_targets(testing::OpPrecisions::kCopied));

}  // namespace
}  // namespace rpt::kernels
