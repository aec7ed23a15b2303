// The CPU decoder's keys and values: beams share their prefixes in a tree of positions (a fork
// copies nothing, a branch no row continues is freed, a row may continue a shorter prefix of
// its parent), a step past the memory limit throws before it changes anything, and the
// encoder's keys and values are held sentence by sentence.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "engine/cpu/decoder_state.h"
#include "engine/engine.h"
#include "engine/model.h"
#include "engine/cpu/position_tree.h"
#include "kernels/errors.h"
#include "kernels/memory_budget.h"
#include "tests/support/weights_writer.h"

namespace rpt {
namespace {

class DecoderStateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = testing::make_temp_directory("rpt-decoder-state");
    testing::write_synthetic_model(
        directory_,
        testing::relative_model_options(
            {.encoder_layers = 1, .decoder_layers = 2, .d_model = 16, .heads = 4, .d_ff = 32}, 4));
    model_ = Model::load(directory_);
  }
  void TearDown() override {
    model_.reset();
    std::filesystem::remove_all(directory_);
  }

  // One row decoded for `steps` positions from a new sentence.
  static void decode_one_row(DecoderState& state, int steps) {
    state.reorder({-1}, {0});
    for (int t = 0; t < steps; ++t) {
      state.append_positions({t});
      state.reorder({0}, {t + 1});
    }
  }

  // Row r's positions in the last step's history.
  static std::vector<float*> history_of(const StepHistory& history, int r) {
    return {history.of(r), history.of(r) + history.count(r)};
  }

  std::string directory_;
  std::shared_ptr<const Model> model_;
};

TEST_F(DecoderStateTest, ForksShareTheirParentsPrefix) {
  kernels::MemoryBudget budget;
  DecoderState state(*model_, &budget);
  decode_one_row(state, 20);
  ASSERT_EQ(state.cached_positions(), 20);
  state.reorder({0, 0, 0, 0}, {20, 20, 20, 20});  // four beams of the one row
  EXPECT_EQ(state.cached_positions(), 20);        // nothing copied
  const StepHistory& history = state.append_positions({20, 20, 20, 20});
  EXPECT_EQ(state.cached_positions(), 24);
  const std::vector<float*> first = history_of(history, 0);
  for (int r = 1; r < 4; ++r) {
    const std::vector<float*> other = history_of(history, r);
    ASSERT_EQ(other.size(), 21u);
    EXPECT_TRUE(std::equal(first.begin(), first.end() - 1, other.begin())) << r;
    EXPECT_NE(first.back(), other.back()) << r;  // each beam's new position is its own
  }
  // Only beam 2 goes on: the other three new positions are freed, the prefix is kept.
  state.reorder({2}, {21});
  EXPECT_EQ(state.cached_positions(), 21);
  // The sentence ends: all of it is freed, and with nothing live the storage goes back too.
  const std::size_t held = budget.used_bytes();
  EXPECT_GT(held, 0u);
  state.reorder({}, {});
  EXPECT_EQ(state.cached_positions(), 0);
  EXPECT_EQ(budget.used_bytes(), 0u);
  decode_one_row(state, 20);
  EXPECT_EQ(budget.used_bytes(), held);
  // While a row lives, the positions freed by others are reused, not allocated anew.
  state.reorder({0, -1}, {20, 0});
  for (int step = 0, t = 0; step < 30; ++step) {
    state.append_positions({20, t});
    if (++t < 10) {
      state.reorder({0, 1}, {20, t});  // row 0 keeps its 20 positions, row 1 grows
    } else {
      state.reorder({0, -1}, {20, 0});  // row 1 ends, a new one starts
      t = 0;
    }
  }
  EXPECT_EQ(budget.used_bytes(), held);
}

TEST_F(DecoderStateTest, ARowMayContinueAShorterPrefixOfItsParent) {
  DecoderState state(*model_);
  decode_one_row(state, 12);
  const std::vector<float*> full = history_of(state.append_positions({12}), 0);
  state.reorder({0, 0}, {13, 5});
  const StepHistory& history = state.append_positions({13, 5});
  const std::vector<float*> shorter = history_of(history, 1);
  ASSERT_EQ(shorter.size(), 6u);
  EXPECT_TRUE(std::equal(shorter.begin(), shorter.end() - 1, full.begin()));
  EXPECT_EQ(state.cached_positions(), 13 + 1 + 1);
  EXPECT_THROW(state.reorder({0}, {20}), InvalidArgument);  // more than the row has
}

TEST_F(DecoderStateTest, AStepAtAPositionTheRowDoesNotHoldIsRefused) {
  DecoderState state(*model_);
  decode_one_row(state, 3);
  EXPECT_THROW(state.append_positions({5}), InvalidArgument);
  EXPECT_THROW(state.append_positions({3, 0}), InvalidArgument);
  EXPECT_NO_THROW(state.append_positions({3}));
}

// Positions come in chunks charged to the budget before they are allocated: past the limit the
// step throws and the rows keep what they held.
TEST_F(DecoderStateTest, AStepPastTheMemoryLimitChangesNothing) {
  const std::size_t chunk = PositionTree::kNodesPerChunk * 2 * 2 * 16 * sizeof(float);
  kernels::MemoryBudget budget(chunk);
  DecoderState state(*model_, &budget);
  decode_one_row(state, PositionTree::kNodesPerChunk);
  EXPECT_EQ(budget.used_bytes(), chunk);
  EXPECT_THROW(state.append_positions({PositionTree::kNodesPerChunk}), ResourceExhausted);
  EXPECT_EQ(state.cached_positions(), PositionTree::kNodesPerChunk);
  EXPECT_EQ(budget.used_bytes(), chunk);
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

// Sentences are encoded packed, without padding: a long one among short ones costs its own
// tokens only (a padded group of 21 sentences would hold 21 x 100 positions), and each encodes as
// it does alone.
TEST_F(DecoderStateTest, MixedLengthsAreEncodedWithoutPadding) {
  const std::shared_ptr<const Engine> engine = Engine::create(model_);
  const std::unique_ptr<DecoderBackend> backend = engine->make_backend();
  std::vector<std::vector<int>> sources(1);
  for (int j = 0; j < 100; ++j) sources[0].push_back(4 + (j * 5) % 20);
  for (int i = 0; i < 20; ++i) sources.push_back({4 + i % 20});
  const std::vector<EncodedSentence> together = backend->encode(sources);
  ASSERT_EQ(together.size(), sources.size());
  const std::size_t d = 16;
  const std::size_t per_token = 2 * 2 * 16;  // floats: 2 layers x keys and values
  const std::size_t tokens = 120;
  // Final states, keys and values of the group, plus each sentence's copy of its keys and values.
  EXPECT_LE(engine->peak_device_memory_bytes(), tokens * (d + 2 * per_token) * sizeof(float));
  for (const std::size_t i : {0u, 1u, 20u}) {
    const std::vector<EncodedSentence> alone = backend->encode({sources[i]});
    ASSERT_EQ(together[i].length, static_cast<int>(sources[i].size()));
    ASSERT_EQ(together[i].length, alone[0].length);
    const auto* a = static_cast<const float*>(together[i].keys_values);
    const auto* b = static_cast<const float*>(alone[0].keys_values);
    EXPECT_TRUE(std::equal(a, a + alone[0].length * per_token, b)) << "sentence " << i;
  }
}

// More source tokens than one encoder group holds (1,024 tokens) are encoded in groups;
// every sentence's keys and values are those it has encoded alone.
TEST_F(DecoderStateTest, ALargeAdmissionIsEncodedInGroupsAsEachSentenceAlone) {
  const std::shared_ptr<const Engine> engine = Engine::create(model_);
  const std::unique_ptr<DecoderBackend> backend = engine->make_backend();
  std::vector<std::vector<int>> sources;
  for (int i = 0; i < 40; ++i) {
    std::vector<int> ids;
    for (int j = 0; j < 20 + i % 17; ++j) ids.push_back(4 + (i * 7 + j) % 20);
    sources.push_back(ids);
  }
  const std::vector<EncodedSentence> together = backend->encode(sources);
  ASSERT_EQ(together.size(), sources.size());
  const std::size_t per_token = 2 * 2 * 16;  // floats: 2 layers x keys and values
  std::size_t tokens = 0;
  for (const auto& ids : sources) tokens += ids.size();
  EXPECT_EQ(backend->device_memory_bytes(), tokens * per_token * sizeof(float));
  // Never the whole admission at once (final states, keys and values of all its tokens, held
  // while each sentence takes its copy).
  EXPECT_LT(engine->peak_device_memory_bytes(), tokens * (16 + 2 * per_token) * sizeof(float));
  for (const std::size_t i : {0u, 17u, 39u}) {
    const std::vector<EncodedSentence> alone = backend->encode({sources[i]});
    ASSERT_EQ(together[i].length, alone[0].length);
    const auto* a = static_cast<const float*>(together[i].keys_values);
    const auto* b = static_cast<const float*>(alone[0].keys_values);
    EXPECT_TRUE(std::equal(a, a + alone[0].length * per_token, b)) << "sentence " << i;
  }
}

}  // namespace
}  // namespace rpt
