// Beam search edge cases on hand-made log-probabilities (no model involved).
#include "engine/beam_search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/errors.h"

namespace rpt {
namespace {

constexpr int kStart = 0;
constexpr int kEos = 1;
constexpr int kVocab = 6;

// The decoder's vocabulary scan in miniature: every row's candidates best first (EOS forced to
// -65504 while blocked), then one beam search step.
std::vector<int> advance(BeamSearch& search, std::vector<float> log_probs) {
  const int rows = search.alive();
  std::vector<float> best;
  std::vector<int> ids;
  for (int r = 0; r < rows; ++r) {
    float* row = log_probs.data() + r * kVocab;
    if (search.eos_blocked()) row[kEos] = -65504.0f;
    std::vector<int> order(kVocab);
    for (int t = 0; t < kVocab; ++t) order[t] = t;
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return row[a] > row[b]; });
    for (int t : order) {
      best.push_back(row[t]);
      ids.push_back(t);
    }
  }
  return search.advance(best.data(), ids.data(), kVocab);
}

// Log-probs for `rows` alive beams, every row the same distribution.
std::vector<float> rows_of(int rows, const std::vector<float>& distribution) {
  std::vector<float> out;
  for (int r = 0; r < rows; ++r) out.insert(out.end(), distribution.begin(), distribution.end());
  return out;
}

// A distribution preferring `token` with log-prob -0.1, the others -3 .. -3.4, EOS `eos_logp`.
std::vector<float> prefer(int token, float eos_logp = -5.0f) {
  std::vector<float> d(kVocab);
  for (int t = 0; t < kVocab; ++t) d[t] = -3.0f - 0.1f * t;
  d[kEos] = eos_logp;
  d[token] = -0.1f;
  return d;
}

TEST(BeamSearch, BeamOneIsGreedyWithNormalisedScore) {
  DecodingOptions options;
  options.beam_size = 1;
  BeamSearch search(options, kStart, kEos);
  const std::vector<int> path = {3, 4, 2};
  float total = 0.0f;
  for (int token : path) {
    ASSERT_FALSE(search.done());
    EXPECT_EQ(search.alive(), 1);
    auto lp = rows_of(1, prefer(token));
    total += lp[token];
    const auto parents = advance(search, lp);
    EXPECT_EQ(parents, std::vector<int>{0});
  }
  auto lp = rows_of(1, prefer(kEos, -0.01f));
  total += lp[kEos];
  advance(search, lp);
  ASSERT_TRUE(search.done());
  ASSERT_EQ(search.results().size(), 1u);
  EXPECT_EQ(search.results()[0].ids, path);
  // Four tokens generated (EOS included); average penalty is len + 1 = 5 with alpha 1.
  EXPECT_NEAR(search.results()[0].score, total / 5.0f, 1e-6);
}

TEST(BeamSearch, EosAtFirstStepGivesAnEmptyHypothesis) {
  DecodingOptions options;
  options.beam_size = 4;
  BeamSearch search(options, kStart, kEos);
  EXPECT_EQ(search.last_token(0), kStart);
  auto lp = rows_of(1, prefer(kEos, -0.01f));
  advance(search, lp);
  ASSERT_TRUE(search.done());
  ASSERT_EQ(search.results().size(), 1u);
  EXPECT_TRUE(search.results()[0].ids.empty());
}

TEST(BeamSearch, MaxLengthFinishesEveryBeam) {
  DecodingOptions options;
  options.beam_size = 3;
  options.n_best = 3;
  options.max_length = 4;
  BeamSearch search(options, kStart, kEos);
  int steps = 0;
  while (!search.done()) {
    auto lp = rows_of(search.alive(), prefer(2, -20.0f));
    advance(search, lp);
    ++steps;
  }
  EXPECT_EQ(steps, 4);
  ASSERT_EQ(search.results().size(), 3u);
  for (const Hypothesis& h : search.results()) EXPECT_EQ(h.ids.size(), 4u);
}

TEST(BeamSearch, NBestAreDistinctAndOrderedByScore) {
  DecodingOptions options;
  options.beam_size = 4;
  options.n_best = 4;
  options.max_length = 6;
  BeamSearch search(options, kStart, kEos);
  // Step 1 spreads over tokens 2..5; afterwards every beam ends.
  std::vector<float> first = {-9.0f, -9.0f, -0.5f, -1.0f, -1.5f, -2.0f};
  advance(search, first);
  ASSERT_EQ(search.alive(), 4);
  auto lp = rows_of(4, prefer(kEos, -0.01f));
  advance(search, lp);
  ASSERT_TRUE(search.done());
  const auto& results = search.results();
  ASSERT_EQ(results.size(), 4u);
  for (std::size_t i = 1; i < results.size(); ++i) {
    EXPECT_GE(results[i - 1].score, results[i].score);
    EXPECT_NE(results[i - 1].ids, results[i].ids);
  }
  EXPECT_EQ(results[0].ids, std::vector<int>{2});
}

TEST(BeamSearch, FinishedBeamLeavesAndOthersContinueUntilTheBestEnds) {
  DecodingOptions options;
  options.beam_size = 2;
  BeamSearch search(options, kStart, kEos);
  std::vector<float> first = {-9.0f, -9.0f, -0.2f, -0.3f, -9.0f, -9.0f};
  advance(search, first);
  ASSERT_EQ(search.alive(), 2);
  // Beam 0 (token 2) keeps going; beam 1 (token 3) ends: second-best pick is EOS.
  std::vector<float> second = {-9.0f, -6.0f, -9.0f, -9.0f, -0.1f, -9.0f,   // beam 0
                               -9.0f, -0.2f, -9.0f, -9.0f, -9.0f, -9.0f};  // beam 1
  const auto parents = advance(search, second);
  EXPECT_FALSE(search.done());  // the best pick (2 4) is not finished
  // Survivors: (2 4) from beam 0 and the best non-EOS continuation.
  ASSERT_EQ(parents.size(), 1u);
  EXPECT_EQ(parents[0], 0);
  auto lp = rows_of(search.alive(), prefer(kEos, -0.01f));
  advance(search, lp);
  ASSERT_TRUE(search.done());
  EXPECT_EQ(search.results()[0].ids, (std::vector<int>{2, 4}));
}

TEST(BeamSearch, MinLengthBlocksEarlyEos) {
  DecodingOptions options;
  options.beam_size = 1;
  options.min_length = 2;
  BeamSearch search(options, kStart, kEos);
  for (int step = 0; step < 2; ++step) {
    auto lp = rows_of(1, prefer(kEos, -0.01f));  // EOS is the favourite...
    advance(search, lp);
    EXPECT_FALSE(search.done());  // ...but blocked
  }
  auto lp = rows_of(1, prefer(kEos, -0.01f));
  advance(search, lp);
  ASSERT_TRUE(search.done());
  EXPECT_EQ(search.results()[0].ids.size(), 2u);
}

// A model that alternates 2, 3, 2, 3, ...: with no_repeat_ngram_size 2 the second (2, 3) is
// ruled out and the next best token taken; off, the loop goes on. Also with a beam of 3.
TEST(BeamSearch, NoRepeatNgramSizeRulesOutARepeatedPair) {
  for (int beam_size : {1, 3}) {
    for (int ngram : {0, 2}) {
      DecodingOptions options;
      options.beam_size = beam_size;
      options.max_length = 4;
      options.no_repeat_ngram_size = ngram;
      BeamSearch search(options, kStart, kEos);
      for (int token : {2, 3, 2, 3}) advance(search, rows_of(search.alive(), prefer(token)));
      ASSERT_TRUE(search.done());
      const std::vector<int> expected =
          ngram == 0 ? std::vector<int>{2, 3, 2, 3} : std::vector<int>{2, 3, 2, 0};
      EXPECT_EQ(search.results().front().ids, expected)
          << "beam " << beam_size << ", no_repeat_ngram_size " << ngram;
    }
  }
  DecodingOptions bad;
  bad.no_repeat_ngram_size = kMaxNoRepeatNgram + 1;
  EXPECT_THROW(validate(bad), InvalidArgument);
}

// Every scanned candidate of the only beam repeats (n = 1 after "2 2"): it ends instead of
// being lost.
TEST(BeamSearch, ABeamWhoseCandidatesAllRepeatEnds) {
  DecodingOptions options;
  options.beam_size = 1;
  options.no_repeat_ngram_size = 1;
  BeamSearch search(options, kStart, kEos);
  advance(search, prefer(2));
  ASSERT_FALSE(search.done());
  ASSERT_EQ(search.candidates_per_beam(), 1 + kBanSlack);
  // A scan of only the repeated token (stride 1 would be refused: give it the slack's width).
  std::vector<float> log_probs(static_cast<std::size_t>(search.candidates_per_beam()), -0.5f);
  std::vector<int> ids(log_probs.size(), 2);
  search.advance(log_probs.data(), ids.data(), static_cast<int>(ids.size()));
  ASSERT_TRUE(search.done());
  EXPECT_EQ(search.results().front().ids, (std::vector<int>{2}));
}

TEST(BeamSearch, GnmtPenaltyNormalisesScores) {
  DecodingOptions options;
  options.beam_size = 1;
  options.length_penalty_type = LengthPenaltyType::kGnmt;
  options.length_penalty = 0.6f;
  BeamSearch search(options, kStart, kEos);
  auto lp = rows_of(1, prefer(kEos, -0.5f));
  lp[kEos] = -0.01f;
  advance(search, lp);
  ASSERT_TRUE(search.done());
  EXPECT_NEAR(search.results()[0].score, -0.01 / std::pow((5.0 + 2.0) / 6.0, 0.6), 1e-6);
}

TEST(BeamSearch, RejectsOptionsOutOfRange) {
  DecodingOptions options;
  options.beam_size = 0;
  EXPECT_THROW(validate(options), InvalidArgument);
  options.beam_size = 2;
  options.n_best = 3;
  EXPECT_THROW(validate(options), InvalidArgument);
  options.n_best = 1;
  options.max_length = 0;
  EXPECT_THROW(validate(options), InvalidArgument);
  options.max_length = 5;
  options.min_length = 6;
  EXPECT_THROW(validate(options), InvalidArgument);
  options.min_length = 0;
  options.length_penalty = -1.0f;
  EXPECT_THROW(validate(options), InvalidArgument);
  options.length_penalty = 0.5f;
  EXPECT_NO_THROW(validate(options));
}

// Constrained search (engine/decoding_constraints.h) on the same hand-made distributions.

std::shared_ptr<const DecodingConstraints> constraints(std::vector<PhraseConstraint> phrases) {
  return std::make_shared<const DecodingConstraints>(std::move(phrases));
}

// Runs `search` to the end, step `i` using distribution `steps[min(i, last)]` for every row.
std::vector<int> run(BeamSearch& search, const std::vector<std::vector<float>>& steps) {
  for (std::size_t i = 0; !search.done(); ++i) {
    advance(search, rows_of(search.alive(), steps[std::min(i, steps.size() - 1)]));
  }
  return search.results().at(0).ids;
}

DecodingOptions greedy(int max_length = 20) {
  DecodingOptions options;
  options.beam_size = 1;
  options.max_length = max_length;
  return options;
}

TEST(ConstrainedBeamSearch, MissingPhraseTakesEndOfSentencesPlace) {
  // The model says "3" then wants to stop; token 4 is required: it comes where EOS was.
  BeamSearch search(greedy(), kStart, kEos, constraints({{{4}, 1, -1}}));
  EXPECT_EQ(run(search, {prefer(3), prefer(kEos)}), (std::vector<int>{3, 4}));
  EXPECT_TRUE(search.results()[0].constraints_met);
  // Unconstrained, the same model drops it.
  BeamSearch free_search(greedy(), kStart, kEos);
  EXPECT_EQ(run(free_search, {prefer(3), prefer(kEos)}), (std::vector<int>{3}));
}

TEST(ConstrainedBeamSearch, MultiTokenPhraseIsForcedToItsEnd) {
  // Once inserted, the phrase 4 5 continues although the model prefers EOS.
  BeamSearch search(greedy(), kStart, kEos, constraints({{{4, 5}, 1, -1}}));
  EXPECT_EQ(run(search, {prefer(2), prefer(kEos)}), (std::vector<int>{2, 4, 5}));
  EXPECT_TRUE(search.results()[0].constraints_met);
}

TEST(ConstrainedBeamSearch, NoPhraseBeyondItsCountAndBannedNever) {
  // The model repeats 3 then 2; 3 is wanted once and 2 is banned (count 0).
  for (int beam : {1, 3}) {
    DecodingOptions options = greedy(6);
    options.beam_size = beam;
    BeamSearch search(options, kStart, kEos, constraints({{{3}, 1, -1}, {{2}, 0, -1}}));
    const auto ids = run(search, {prefer(3), prefer(3), prefer(2), prefer(kEos, -0.05f)});
    EXPECT_EQ(std::count(ids.begin(), ids.end(), 3), 1) << "beam " << beam;
    EXPECT_EQ(std::count(ids.begin(), ids.end(), 2), 0) << "beam " << beam;
    EXPECT_TRUE(search.results()[0].constraints_met);
  }
}

TEST(ConstrainedBeamSearch, MissingPhrasesAreForcedBeforeMaxLength) {
  // The model never wants EOS or the required 4 and 5: with max_length 4 they fill the last two
  // steps, in source order.
  BeamSearch search(greedy(4), kStart, kEos, constraints({{{4}, 1, -1}, {{5}, 1, -1}}));
  EXPECT_EQ(run(search, {prefer(2)}), (std::vector<int>{2, 2, 4, 5}));
  EXPECT_TRUE(search.results()[0].constraints_met);
}

TEST(ConstrainedBeamSearch, RepeatedPhraseCountsEveryMissingOccurrence) {
  // Three 4s in four steps: after the first one, two are still missing (not one).
  BeamSearch search(greedy(4), kStart, kEos, constraints({{{4}, 3, -1}}));
  EXPECT_EQ(run(search, {prefer(4), prefer(2)}), (std::vector<int>{4, 2, 4, 4}));
  EXPECT_TRUE(search.results()[0].constraints_met);
}

TEST(ConstrainedBeamSearch, ABeamWhoseScanIsAllBannedEndsInsteadOfVanishing) {
  // Scan of 1 + kBanSlack = 5 tokens: 3 0 2 4 5, all banned; EOS ends the hypothesis.
  BeamSearch search(greedy(), kStart, kEos,
                    std::make_shared<const DecodingConstraints>(std::vector<PhraseConstraint>{},
                                                                std::vector<int>{0, 2, 3, 4, 5}));
  EXPECT_EQ(search.candidates_per_beam(), 1 + kBanSlack);
  EXPECT_TRUE(run(search, {prefer(3)}).empty());
  ASSERT_EQ(search.results().size(), 1u);
}

TEST(ConstrainedBeamSearch, SaysWhenMaxLengthLeavesNoRoom) {
  BeamSearch search(greedy(1), kStart, kEos, constraints({{{4}, 1, -1}, {{5}, 1, -1}}));
  EXPECT_EQ(run(search, {prefer(2)}).size(), 1u);
  EXPECT_FALSE(search.results()[0].constraints_met);
}

TEST(ConstrainedBeamSearch, ClosingPhraseWaitsForItsOpener) {
  // 5 closes what 4 opens: the model's early 5 is refused, and the pair comes in order.
  BeamSearch search(greedy(), kStart, kEos, constraints({{{4}, 1, -1}, {{5}, 1, 0}}));
  const auto ids = run(search, {prefer(5), prefer(kEos)});
  ASSERT_EQ(std::count(ids.begin(), ids.end(), 4), 1);
  ASSERT_EQ(std::count(ids.begin(), ids.end(), 5), 1);
  EXPECT_LT(std::find(ids.begin(), ids.end(), 4), std::find(ids.begin(), ids.end(), 5));
}

TEST(ConstrainedBeamSearch, AsksForOneMoreCandidatePerRequiredPhrase) {
  DecodingOptions options;
  options.beam_size = 4;
  EXPECT_EQ(BeamSearch(options, kStart, kEos).candidates_per_beam(), 4);
  EXPECT_EQ(BeamSearch(options, kStart, kEos, constraints({{{4}, 2, -1}, {{5}, 0, -1}}))
                .candidates_per_beam(),
            5);
  options.beam_size = kMaxBeamSize;
  EXPECT_EQ(BeamSearch(options, kStart, kEos, constraints({{{4}, 1, -1}})).candidates_per_beam(),
            kMaxBeamSize);
}

TEST(DecodingConstraints, CountsOverlappingOccurrences) {
  const DecodingConstraints c({{{2, 2, 3}, 1, -1}});
  ConstraintState state = c.initial_state();
  EXPECT_EQ(c.missing_tokens(state), 3);
  for (int token : {2, 2, 2}) c.advance(state, token, -1);
  EXPECT_EQ(c.missing_tokens(state), 1);  // "2 2" matched: one token short
  EXPECT_TRUE(c.allows(state, 3));
  c.advance(state, 3, -1);
  EXPECT_TRUE(c.satisfied(state));
  EXPECT_EQ(c.next_insertion(state), -1);
  for (int token : {2, 2}) c.advance(state, token, -1);
  EXPECT_FALSE(c.allows(state, 3));  // a second occurrence
}

// A text phrase ("Akte", e.g. a glossary target): counted in the decoded text whatever pieces
// write it, inserted as its canonical pieces, never written more often than required.
TEST(DecodingConstraints, TextPhrasesCountAnySegmentation) {
  // Token texts: 0-2 special, 3 " Akte", 4 " Ak", 5 "te", 6 "/", 7 "Akte", 8 " Datei", 9 "e".
  auto texts = std::make_shared<const std::vector<std::string>>(std::vector<std::string>{
      "<unk>", "<s>", "</s>", " Akte", " Ak", "te", "/", "Akte", " Datei", "e"});
  const DecodingConstraints c({{{3}, 2, -1, {"Akte"}}}, {}, texts);
  ConstraintState state = c.initial_state();
  EXPECT_TRUE(c.advances_missing(state, 4));  // " Ak" starts it
  EXPECT_FALSE(c.advances_missing(state, 8));
  for (int token : {4, 5}) c.advance(state, token, -1);  // " Ak" "te": one occurrence
  EXPECT_EQ(state.emitted[0], 1);
  for (int token : {6, 7}) c.advance(state, token, -1);  // "/" "Akte": the second
  EXPECT_TRUE(c.satisfied(state));
  EXPECT_FALSE(c.allows(state, 3));  // a third is refused
  EXPECT_FALSE(c.allows(state, 7));
  EXPECT_TRUE(c.allows(state, 8));

  // Insertion: the canonical ids, forced one by one, then done.
  const DecodingConstraints two({{{4, 5}, 1, -1, {"Akte"}}}, {}, texts);
  ConstraintState inserting = two.initial_state();
  EXPECT_EQ(two.missing_tokens(inserting), 2);
  EXPECT_EQ(two.next_insertion(inserting), 0);
  EXPECT_EQ(two.next_token(inserting, 0), 4);
  two.advance(inserting, 4, 0);
  EXPECT_EQ(two.next_token(inserting, 0), 5);
  EXPECT_EQ(two.missing_tokens(inserting), 1);
  two.advance(inserting, 5, 0);
  EXPECT_TRUE(two.satisfied(inserting));
  EXPECT_EQ(two.next_insertion(inserting), -1);
  EXPECT_THROW(DecodingConstraints({{{3}, 1, -1, {"Akte"}}}), InvalidArgument);  // no texts
}

TEST(DecodingConstraints, RejectsMalformedPhrases) {
  EXPECT_THROW(DecodingConstraints({{{}, 1, -1}}), InvalidArgument);
  EXPECT_THROW(DecodingConstraints({{{3}, -1, -1}}), InvalidArgument);
  EXPECT_THROW(DecodingConstraints({{{3}, 1, 0}}), InvalidArgument);
  EXPECT_THROW(DecodingConstraints({{{3}, 1, 4}}), InvalidArgument);
}

}  // namespace
}  // namespace rpt
