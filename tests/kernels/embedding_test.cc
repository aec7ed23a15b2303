// The embedding lookup on each device (tests/support/op_targets.h): table[id] * scale, plus the
// sinusoidal encoding of the position (sin at even i, cos at odd i, both at position /
// 10000^(pair start / dim)), against its float64 formula; even and odd dimensions (the last sin
// without a cos partner), with and without positions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/embedding.h"
#include "tests/support/op_targets.h"

namespace rpt::kernels {
namespace {

class EmbeddingTest : public testing::OpTargetTest {};

TEST_P(EmbeddingTest, MatchesFloat64) {
  std::mt19937 random(9);
  std::normal_distribution<float> normal;
  const int vocab = 50, count = 12;
  for (const int dim : {64, 33}) {
    for (const bool with_positions : {true, false}) {
      SCOPED_TRACE(::testing::Message()
                   << "dim " << dim << (with_positions ? " with positions" : " no positions"));
      std::vector<float> table(static_cast<std::size_t>(vocab) * dim);
      for (float& v : table) v = normal(random);
      table = rounded(table);
      std::vector<int> ids(count), positions(count);
      std::uniform_int_distribution<int> id(0, vocab - 1), position(0, 39);
      for (int t = 0; t < count; ++t) {
        ids[t] = id(random);
        positions[t] = position(random);
      }
      positions[0] = 0;
      positions[1] = 39;
      const float scale = std::sqrt(static_cast<float>(dim));
      const std::size_t size = static_cast<std::size_t>(count) * dim;
      Array d_table = floats(table), d_ids = ints(ids), d_positions = ints(positions),
            out = floats(std::vector<float>(size));
      run(
          [&] {
            embedding_cpu({.ids = d_ids.as<int>(),
                           .count = count,
                           .table = d_table.as<float>(),
                           .vocab = vocab,
                           .dim = dim,
                           .scale = scale,
                           .positions = with_positions ? d_positions.as<int>() : nullptr,
                           .out = out.as<float>()});
          },
          [&](auto stream) {
            embedding_cuda({.precision = precision(),
                            .ids = d_ids.as<int>(),
                            .count = count,
                            .table = d_table.data(),
                            .dim = dim,
                            .scale = scale,
                            .positions = with_positions ? d_positions.as<int>() : nullptr,
                            .out = out.data()},
                           stream);
          });
      const std::vector<float> result = read_floats(out, size);
      for (int t = 0; t < count; ++t) {
        for (int i = 0; i < dim; ++i) {
          const double entry =
              static_cast<double>(table[static_cast<std::size_t>(ids[t]) * dim + i]) * scale;
          double expected = entry;
          double angle = 0.0;
          if (with_positions) {
            const int pair_start = i & ~1;
            angle = positions[t] * std::pow(10000.0, -static_cast<double>(pair_start) / dim);
            expected += i == pair_start ? std::sin(angle) : std::cos(angle);
          }
          // float32 roundings of the scaled entry and the sum, and of the angle (its exponent is
          // up to log(10000) = 9.2, so a few roundings of it move the angle by ~1e-6 relative).
          const double bound = 2e-7 * (std::abs(entry) + std::abs(expected)) + 4e-7 * angle + 1e-7;
          EXPECT_NEAR(result[static_cast<std::size_t>(t) * dim + i], expected,
                      tolerance(expected, bound))
              << "token " << t << " (position " << positions[t] << ") element " << i;
        }
      }
    }
  }
}

RPT_OP_TARGET_INSTANCES(EmbeddingTest, testing::op_targets());

// Without a table the rows are already in the output (a caller that gathered them from a table of
// its own form: engine/cpu/transformer_ops.cc, 16-bit tables) and are scaled and encoded in
// place: the same bits as the lookup.
TEST(EmbeddingCpu, RowsAlreadyInTheOutputTakeScaleAndPositions) {
  std::mt19937 random(10);
  std::normal_distribution<float> normal;
  const int vocab = 20, dim = 33;
  std::vector<float> table(static_cast<std::size_t>(vocab) * dim);
  for (float& v : table) v = normal(random);
  const std::vector<int> ids = {3, 0, 19, 3}, positions = {0, 1, 2, 7};
  const int count = static_cast<int>(ids.size());
  std::vector<float> looked_up(static_cast<std::size_t>(count) * dim);
  std::vector<float> in_place(looked_up.size());
  for (int t = 0; t < count; ++t) {
    std::copy_n(table.begin() + static_cast<long>(ids[t]) * dim, dim,
                in_place.begin() + static_cast<long>(t) * dim);
  }
  const EmbeddingArgs args{.ids = ids.data(),
                           .count = count,
                           .table = table.data(),
                           .vocab = vocab,
                           .dim = dim,
                           .scale = 1.7f,
                           .positions = positions.data(),
                           .out = looked_up.data()};
  embedding_cpu(args);
  EmbeddingArgs without_table = args;
  without_table.table = nullptr;
  without_table.out = in_place.data();
  embedding_cpu(without_table);
  EXPECT_EQ(std::memcmp(in_place.data(), looked_up.data(), sizeof(float) * looked_up.size()), 0);
}

}  // namespace
}  // namespace rpt::kernels
