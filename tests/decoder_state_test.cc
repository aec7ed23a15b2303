// The CPU decoder's KV cache grows row by row: a row's slot holds what that row has decoded, not
// what the longest row of the batch has, and a slot that a long row grew is given back when a
// short row takes it over (a run-away sentence at 250 steps used to size every row's cache).
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
    testing::SyntheticModelOptions options;
    ModelConfig& c = options.config;
    c.architecture = {.encoder_layers = 1, .decoder_layers = 2, .d_model = 16, .heads = 4, .d_ff = 32};
    c.position.type = PositionType::kRelative;
    c.position.encoder_max_relative_position = 4;
    c.position.decoder_max_relative_position = 4;
    testing::write_synthetic_model(directory_, options);
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
  // Row 0 holds 200 positions, row 1 the smallest allocation (16), not 200 as well.
  EXPECT_EQ(budget.used_bytes(), bytes_for(200) + bytes_for(16));
}

TEST_F(DecoderStateTest, ASlotALongRowGrewIsGivenBackToAShortOne) {
  kernels::MemoryBudget budget;
  DecoderState state(*model_, &budget);
  state.reorder({-1}, {0});
  state.reserve_positions({199});
  ASSERT_EQ(budget.used_bytes(), bytes_for(200));
  state.reorder({-1}, {0});  // the long row ends; a new sentence's row takes its slot
  state.reserve_positions({0});
  EXPECT_EQ(budget.used_bytes(), bytes_for(16));
  EXPECT_EQ(budget.peak_bytes(), bytes_for(200));
}

}  // namespace
}  // namespace rpt
