// The CPU decoder's KV cache grows row by row, in chunks of 16 positions: a row's slot holds what
// that row has decoded, not what the longest row of the batch has, and a slot that a long row
// grew is given back when a short row takes it over (a run-away sentence at 250 steps used to
// size every row's cache).
#include <gtest/gtest.h>

#include <filesystem>

#include "engine/decoder.h"
#include "engine/model.h"
#include "kernels/memory_budget.h"
#include "tests/support/weights_writer.h"

namespace rpt {
namespace {

class DecoderStateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = testing::make_temp_directory("rpt-decoder-state");
    testing::write_synthetic_model(
        directory_, testing::relative_model_options(
                        {.encoder_layers = 1, .decoder_layers = 2, .d_model = 16, .heads = 4,
                         .d_ff = 32},
                        4));
    model_ = Model::load(directory_);
  }
  void TearDown() override {
    model_.reset();
    std::filesystem::remove_all(directory_);
  }

  // Bytes of keys and values that `positions` cached positions of one row take in all layers.
  std::size_t bytes_for(std::size_t positions) const {
    return positions * 2 * 16 * 2 * sizeof(float);  // keys + values, d_model 16, 2 layers
  }

  std::string directory_;
  std::shared_ptr<const Model> model_;
};

TEST_F(DecoderStateTest, EachRowsCacheGrowsWithItsOwnLength) {
  kernels::MemoryBudget budget;
  DecoderState state(*model_, &budget);
  state.reorder({-1, -1}, {0, 0});  // two new rows
  state.reserve_positions({199, 3});
  // Whole chunks of 16 positions: row 0 holds 208, row 1 one chunk, not 208 as well.
  EXPECT_EQ(budget.used_bytes(), bytes_for(208) + bytes_for(16));
}

TEST_F(DecoderStateTest, ASlotALongRowGrewIsGivenBackToAShortOne) {
  kernels::MemoryBudget budget;
  DecoderState state(*model_, &budget);
  state.reorder({-1}, {0});
  state.reserve_positions({199});
  ASSERT_EQ(budget.used_bytes(), bytes_for(208));
  state.reorder({-1}, {0});  // the long row ends; a new sentence's row takes its slot
  state.reserve_positions({0});
  EXPECT_EQ(budget.used_bytes(), bytes_for(16));
  EXPECT_EQ(budget.peak_bytes(), bytes_for(208));
}

}  // namespace
}  // namespace rpt
