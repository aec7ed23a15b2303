// Beam search over one sentence, with OpenNMT-py's semantics (our parity reference):
// candidates are ranked by (cumulative log-prob) / length_penalty(generated + 1); a beam that
// picks EOS becomes a finished hypothesis; the sentence is done when this step's best pick is
// finished and at least n_best hypotheses exist; at max_length every pick is finished.
// Greedy decoding is beam_size 1. With DecodingConstraints (protected spans), candidates are
// filtered and completed as engine/decoding_constraints.h describes. Not thread-safe; one
// instance per sentence.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "engine/decoding_constraints.h"

namespace rpt {

enum class LengthPenaltyType {
  kAverage,  // len^alpha (OpenNMT-py "avg", CTranslate2's form)
  kGnmt,     // ((5 + len) / 6)^alpha (Wu et al. 2016)
  kNone,
};

// "average", "gnmt", "none" (the flags' and the config's names); InvalidArgument otherwise.
LengthPenaltyType parse_length_penalty_type(std::string_view name);
const char* length_penalty_type_name(LengthPenaltyType type);

inline constexpr int kMaxBeamSize = 64;  // the top-k kernels' candidate buffers are sized for it
inline constexpr int kBanSlack = 4;      // scanned candidates added for banned tokens
inline constexpr int kMaxNoRepeatNgram = 64;

struct DecodingOptions {
  int beam_size = 4;            // 1: greedy
  int n_best = 1;               // hypotheses returned, <= beam_size
  int max_length = 250;         // generated tokens, EOS not counted
  int min_length = 0;           // EOS is blocked before this many tokens
  float length_penalty = 1.0f;  // alpha
  LengthPenaltyType length_penalty_type = LengthPenaltyType::kAverage;
  // > 0: no hypothesis repeats a sequence of this many target tokens (CTranslate2's
  // no_repeat_ngram_size): a model looping on a phrase moves on instead. 0: off, as OpenNMT-py.
  int no_repeat_ngram_size = 0;

  // Every field, in order, for whoever must see them all (the server's cache key: a cached
  // translation must have been made with the same options).
  template <typename Visitor>
  void visit(Visitor&& visitor) const {
    visitor(beam_size);
    visitor(n_best);
    visitor(max_length);
    visitor(min_length);
    visitor(length_penalty);
    visitor(length_penalty_type);
    visitor(no_repeat_ngram_size);
  }
};
// A field added to DecodingOptions changes its size: visit() (and so the cache key) must name it
// before this is updated.
static_assert(sizeof(DecodingOptions) == 7 * 4,
              "a new DecodingOptions field must be added to DecodingOptions::visit");

// Throws InvalidArgument naming the bad option and its allowed range.
void validate(const DecodingOptions& options);

struct Hypothesis {
  std::vector<int> ids;         // target ids, without the final EOS
  float score = 0.0f;           // normalised by the length penalty
  bool constraints_met = true;  // every constraint holds (only false at max_length)
};

class BeamSearch {
 public:
  // `constraints`: nullptr or empty for an unconstrained search.
  BeamSearch(const DecodingOptions& options, int start_id, int eos_id,
             std::shared_ptr<const DecodingConstraints> constraints = nullptr);

  int alive() const { return static_cast<int>(beams_.size()); }
  // Tokens generated so far: the decoder position of the next input token.
  int generated() const { return generated_; }
  int last_token(int beam) const;
  bool done() const { return done_; }
  const DecodingOptions& options() const { return options_; }

  // True while EOS must not be picked (min_length not reached yet).
  bool eos_blocked() const { return generated_ + 1 <= options_.min_length; }

  // Candidates each beam needs from the step's scan: beam_size, plus one per required phrase
  // (each can rule out one token) and kBanSlack when tokens are banned, at most kMaxBeamSize.
  // Fewer when the vocabulary is smaller. A beam whose scanned tokens are all ruled out ends
  // (or gets its missing span), it is never dropped.
  int candidates_per_beam() const { return candidates_per_beam_; }

  // Consumes the step's candidates: for every alive beam its best (log-prob, token) pairs, best
  // first, at least min(candidates_per_beam(), vocabulary) of them (log_probs and ids are
  // [alive(), stride]; EOS already forced down while eos_blocked()). Returns, for every beam
  // alive after the step, the index of its parent among the beams alive before it.
  std::vector<int> advance(const float* log_probs, const int* ids, int stride);

  // The n_best hypotheses, best first. Valid once done().
  const std::vector<Hypothesis>& results() const { return results_; }

 private:
  struct Beam {
    std::vector<int> ids;
    float cumulative = 0.0f;     // sum of log-probs
    ConstraintState constraint;  // empty without constraints
  };
  struct Candidate {
    float score;
    int beam;
    int token;
    int insertion = -1;  // the constraint this token starts inserting, -1: none
    bool replaces_eos =
        false;  // a text phrase's insertion in EOS's place (ConstraintState::ending)
  };
  float penalty(int length) const;
  // Whether `token` after `beam`'s tokens would repeat one of its n-grams (no_repeat_ngram_size).
  bool repeats(const Beam& beam, int token) const;
  // The constrained counterpart of reading each beam's first beam_size candidates.
  void constrained_candidates(const float* log_probs, const int* ids, int stride,
                              float length_penalty, std::vector<Candidate>& out) const;

  DecodingOptions options_;
  int start_id_;
  int eos_id_;
  std::shared_ptr<const DecodingConstraints> constraints_;  // nullptr: unconstrained
  int candidates_per_beam_;
  int generated_ = 0;
  bool done_ = false;
  std::vector<Beam> beams_;
  std::vector<Hypothesis> finished_;
  std::vector<Hypothesis> results_;
};

}  // namespace rpt
