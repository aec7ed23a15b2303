// The CPU decoder's KV cache grows row by row, in chunks of 16 positions: a row's slot holds what
// that row has decoded, not what the longest row of the batch has, and a slot that a long row
// grew is given back when a short row takes it over (a run-away sentence at 250 steps used to
// size every row's cache). The encoder's keys and values are held sentence by sentence.
#include <gtest/gtest.h>

#include <filesystem>

#include "engine/decoder.h"
#include "engine/engine.h"
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

// A slot more than one chunk larger than its new row needs is cut to size: a long row's 208
// positions, and also three chunks for a one-chunk row (which used to stay: slots averaged 70
// positions for rows of 10-20 at batch 32).
TEST_F(DecoderStateTest, ASlotLargerThanItsNewRowNeedsIsCutToSize) {
  for (const int longest : {199, 40}) {
    kernels::MemoryBudget budget;
    DecoderState state(*model_, &budget);
    state.reorder({-1}, {0});
    state.reserve_positions({longest});
    const std::size_t grown = bytes_for((static_cast<std::size_t>(longest) / 16 + 1) * 16);
    ASSERT_EQ(budget.used_bytes(), grown);
    state.reorder({-1}, {0});  // the long row ends; a new sentence's row takes its slot
    state.reserve_positions({0});
    EXPECT_EQ(budget.used_bytes(), bytes_for(16)) << longest;
    EXPECT_EQ(budget.peak_bytes(), grown) << longest;
  }
}

// A fork's new slot holds its parent's prefix after the reorder, sized in whole chunks.
TEST_F(DecoderStateTest, AForkCopiesItsParentsPrefix) {
  kernels::MemoryBudget budget;
  DecoderState state(*model_, &budget);
  state.reorder({-1}, {0});
  state.reserve_positions({20});
  for (LayerCache& layer : state.layers()) {
    std::vector<float>& keys = layer.keys[static_cast<std::size_t>(state.row_slots()[0])];
    for (std::size_t i = 0; i < keys.size(); ++i) keys[i] = static_cast<float>(i);
  }
  state.reorder({0, 0}, {21, 21});
  ASSERT_EQ(state.row_slots().size(), 2u);
  EXPECT_EQ(budget.used_bytes(), 2 * bytes_for(32));
  for (LayerCache& layer : state.layers()) {
    const std::vector<float>& fork = layer.keys[static_cast<std::size_t>(state.row_slots()[1])];
    for (std::size_t i = 0; i < 21 * 16; ++i) ASSERT_EQ(fork[i], static_cast<float>(i)) << i;
  }
}

// Each sentence of an encoder batch holds its own keys and values: one that finishes gives its
// bytes back while its batch-mates decode on (a batch's memory used to live until its last one).
TEST_F(DecoderStateTest, ASentencesEncoderMemoryIsFreedWithIt) {
  const std::shared_ptr<const Engine> engine = Engine::create(model_);
  const std::unique_ptr<DecoderBackend> backend = engine->make_backend();
  std::vector<EncodedSentence> sentences = backend->encode({{5, 6, 7}, {5, 6, 7, 8, 9, 10, 11}});
  ASSERT_EQ(sentences.size(), 2u);
  const std::size_t per_token = 2 * 2 * 16 * sizeof(float);  // 2 layers x keys and values
  EXPECT_EQ(backend->device_memory_bytes(), (3 + 7) * per_token);
  sentences.pop_back();
  EXPECT_EQ(backend->device_memory_bytes(), 3 * per_token);
}

}  // namespace
}  // namespace rpt
