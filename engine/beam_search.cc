#include "engine/beam_search.h"

#include <algorithm>
#include <cmath>

#include "kernels/errors.h"

namespace rpt {
namespace {

// Higher score first; ties go to the lower (beam, token), as a flat top-k would.
template <typename Candidate>
bool better(const Candidate& a, const Candidate& b) {
  if (a.score != b.score) return a.score > b.score;
  if (a.beam != b.beam) return a.beam < b.beam;
  return a.token < b.token;
}

}  // namespace

LengthPenaltyType parse_length_penalty_type(std::string_view name) {
  if (name == "average") return LengthPenaltyType::kAverage;
  if (name == "gnmt") return LengthPenaltyType::kGnmt;
  RPT_CHECK(name == "none", InvalidArgument, "length penalty type '", name,
            "': it must be average, gnmt or none");
  return LengthPenaltyType::kNone;
}

const char* length_penalty_type_name(LengthPenaltyType type) {
  switch (type) {
    case LengthPenaltyType::kAverage:
      return "average";
    case LengthPenaltyType::kGnmt:
      return "gnmt";
    case LengthPenaltyType::kNone:
      break;
  }
  return "none";
}

void validate(const DecodingOptions& options) {
  RPT_CHECK(options.beam_size >= 1 && options.beam_size <= kMaxBeamSize, InvalidArgument,
            "beam_size must be in [1, ", kMaxBeamSize, "], got ", options.beam_size);
  RPT_CHECK(options.n_best >= 1 && options.n_best <= options.beam_size, InvalidArgument,
            "n_best must be in [1, beam_size=", options.beam_size, "], got ", options.n_best);
  RPT_CHECK(options.max_length >= 1, InvalidArgument, "max_length must be >= 1, got ",
            options.max_length);
  RPT_CHECK(options.min_length >= 0 && options.min_length <= options.max_length, InvalidArgument,
            "min_length must be in [0, max_length=", options.max_length, "], got ",
            options.min_length);
  RPT_CHECK(std::isfinite(options.length_penalty) && options.length_penalty >= 0.0f &&
                options.length_penalty <= 10.0f,
            InvalidArgument, "length_penalty must be in [0, 10], got ", options.length_penalty);
  RPT_CHECK(options.no_repeat_ngram_size >= 0 && options.no_repeat_ngram_size <= kMaxNoRepeatNgram,
            InvalidArgument, "no_repeat_ngram_size must be in [0, ", kMaxNoRepeatNgram, "], got ",
            options.no_repeat_ngram_size);
}

BeamSearch::BeamSearch(const DecodingOptions& options, int start_id, int eos_id,
                       std::shared_ptr<const DecodingConstraints> constraints)
    : options_(options),
      start_id_(start_id),
      eos_id_(eos_id),
      constraints_(constraints && !constraints->empty() ? std::move(constraints) : nullptr),
      candidates_per_beam_(options.beam_size) {
  validate(options_);
  Beam start;  // one start row; the beam fills up after the first step
  // Banned tokens (by the constraints or as repeats) rarely reach a beam's best candidates: a
  // few more cover them.
  const bool bans = options_.no_repeat_ngram_size > 0 || (constraints_ && constraints_->banned());
  const int ban_slack = bans ? kBanSlack : 0;
  candidates_per_beam_ = std::min(kMaxBeamSize, options_.beam_size + ban_slack);
  if (constraints_) {
    candidates_per_beam_ = std::min(kMaxBeamSize, candidates_per_beam_ + constraints_->required());
    start.constraint = constraints_->initial_state();
  }
  beams_.push_back(std::move(start));
}

int BeamSearch::last_token(int beam) const {
  const Beam& b = beams_.at(static_cast<std::size_t>(beam));
  return b.ids.empty() ? start_id_ : b.ids.back();
}

float BeamSearch::penalty(int length) const {
  const double alpha = options_.length_penalty;
  switch (options_.length_penalty_type) {
    case LengthPenaltyType::kAverage:
      return static_cast<float>(std::pow(static_cast<double>(length), alpha));
    case LengthPenaltyType::kGnmt:
      return static_cast<float>(std::pow((5.0 + length) / 6.0, alpha));
    case LengthPenaltyType::kNone:
      break;
  }
  return 1.0f;
}

std::vector<int> BeamSearch::advance(const float* log_probs, const int* ids, int stride) {
  RPT_CHECK(!done_, InvalidArgument, "advance on a finished beam search");
  const int width = options_.beam_size;
  RPT_CHECK(stride >= width, InvalidArgument, "beam search needs ", width,
            " candidates per beam, got ", stride);
  // The reference scores a pick of the n-th token with penalty(n + 1).
  const float length_penalty = penalty(generated_ + 2);

  // Each beam's best `width` candidates are enough: the step keeps `width` overall.
  std::vector<Candidate> candidates;
  candidates.reserve(static_cast<std::size_t>(alive() * width));
  if (constraints_) {
    constrained_candidates(log_probs, ids, stride, length_penalty, candidates);
  } else {
    // The scan's first `width` candidates per beam, repeats skipped; a beam whose scan is all
    // repeats ends (EOS at the scan's lowest log-prob) rather than be lost.
    const int scanned = std::min(stride, candidates_per_beam_);
    for (int b = 0; b < alive(); ++b) {
      const Beam& beam = beams_[static_cast<std::size_t>(b)];
      const long row = static_cast<long>(b) * stride;
      const auto score = [&](float log_prob) {
        return (log_prob + beam.cumulative) / length_penalty;
      };
      int taken = 0;
      for (int i = 0; i < scanned && taken < width; ++i) {
        if (ids[row + i] != eos_id_ && repeats(beam, ids[row + i])) continue;
        candidates.push_back({score(log_probs[row + i]), b, ids[row + i]});
        ++taken;
      }
      if (taken == 0) candidates.push_back({score(log_probs[row + scanned - 1]), b, eos_id_});
    }
  }
  std::sort(candidates.begin(), candidates.end(), better<Candidate>);
  candidates.resize(std::min(candidates.size(), static_cast<std::size_t>(width)));

  ++generated_;
  const bool at_max_length = generated_ >= options_.max_length;
  std::vector<Beam> next;
  std::vector<int> parents;
  for (const Candidate& c : candidates) {
    const Beam& parent = beams_[static_cast<std::size_t>(c.beam)];
    const bool ends = c.token == eos_id_;
    ConstraintState state = parent.constraint;
    if (constraints_ && !ends) {
      constraints_->advance(state, c.token, c.insertion);
      if (c.replaces_eos) state.ending = true;
    }
    if (ends || at_max_length) {
      Hypothesis hypothesis{parent.ids, c.score};
      if (!ends) hypothesis.ids.push_back(c.token);
      if (constraints_) hypothesis.constraints_met = constraints_->satisfied(state);
      finished_.push_back(std::move(hypothesis));
      continue;
    }
    Beam beam{parent.ids, c.score * length_penalty, std::move(state)};
    beam.ids.push_back(c.token);
    next.push_back(std::move(beam));
    parents.push_back(c.beam);
  }
  const bool best_finished =
      candidates.empty() || candidates.front().token == eos_id_ || at_max_length;
  if ((best_finished && static_cast<int>(finished_.size()) >= options_.n_best) || next.empty()) {
    std::stable_sort(finished_.begin(), finished_.end(),
                     [](const Hypothesis& a, const Hypothesis& b) { return a.score > b.score; });
    const auto keep = std::min(finished_.size(), static_cast<std::size_t>(options_.n_best));
    results_.assign(finished_.begin(), finished_.begin() + static_cast<long>(keep));
    beams_.clear();
    done_ = true;
    return {};
  }
  beams_ = std::move(next);
  return parents;
}

bool BeamSearch::repeats(const Beam& beam, int token) const {
  const auto n = static_cast<std::size_t>(options_.no_repeat_ngram_size);
  const std::vector<int>& ids = beam.ids;
  if (n == 0 || ids.size() + 1 < n) return false;
  // The n-gram the token would end: ids[size - (n - 1), size) then token.
  const std::size_t prefix = ids.size() - (n - 1);
  for (std::size_t start = 0; start + n <= ids.size(); ++start) {
    if (ids[start + n - 1] == token && std::equal(ids.begin() + static_cast<long>(start),
                                                  ids.begin() + static_cast<long>(start + n - 1),
                                                  ids.begin() + static_cast<long>(prefix))) {
      return true;
    }
  }
  return false;
}

void BeamSearch::constrained_candidates(const float* log_probs, const int* ids, int stride,
                                        float length_penalty, std::vector<Candidate>& out) const {
  const int width = options_.beam_size;
  const int scanned = std::min(stride, candidates_per_beam_);
  const int steps_left = options_.max_length - generated_;  // this one included
  std::vector<int> taken;
  for (int b = 0; b < alive(); ++b) {
    const Beam& beam = beams_[static_cast<std::size_t>(b)];
    const ConstraintState& state = beam.constraint;
    const float* row_log_probs = log_probs + static_cast<long>(b) * stride;
    const int* row_ids = ids + static_cast<long>(b) * stride;
    const auto score = [&](float log_prob) {
      return (log_prob + beam.cumulative) / length_penalty;
    };
    // An insertion under way, or as many steps left as tokens missing: the beam's one candidate
    // is the next missing token, scored with its own log-prob when the scan has it, else with
    // the scan's lowest (a bound it cannot exceed).
    const auto log_prob_of = [&](int token) {
      float log_prob = row_log_probs[scanned - 1];
      for (int i = 0; i < scanned; ++i) {
        if (row_ids[i] == token) log_prob = row_log_probs[i];
      }
      return log_prob;
    };
    const int insertion = constraints_->next_insertion(state);
    if (insertion >= 0 &&
        (state.forcing >= 0 || state.ending || constraints_->missing_tokens(state) >= steps_left)) {
      const int token = constraints_->next_token(state, insertion);
      out.push_back({score(log_prob_of(token)), b, token, insertion});
      continue;
    }
    if (state.ending) {  // a text phrase took EOS's place and nothing is missing: end
      out.push_back({score(log_prob_of(eos_id_)), b, eos_id_, -1});
      continue;
    }
    // Otherwise the scan's candidates in order, those the constraints rule out dropped, and EOS
    // replaced by the first token of a missing phrase while one is missing. Past the first
    // beam_size, the scan's tokens of missing phrases still compete with their own log-probs:
    // a span can then come where the model puts it rather than where it would stop.
    taken.clear();
    for (int i = 0; i < scanned; ++i) {
      int token = row_ids[i];
      if (static_cast<int>(taken.size()) >= width &&
          (token == eos_id_ || !constraints_->advances_missing(state, token))) {
        continue;
      }
      int starts = -1;
      bool replaces_eos = false;
      if (token == eos_id_ && insertion >= 0) {
        token = constraints_->next_token(state, insertion);
        starts = insertion;
        replaces_eos = constraints_->is_text(insertion);
      } else if (token != eos_id_ &&
                 (!constraints_->allows(state, token) || repeats(beam, token))) {
        continue;
      }
      if (std::find(taken.begin(), taken.end(), token) != taken.end()) continue;
      taken.push_back(token);
      out.push_back({score(row_log_probs[i]), b, token, starts, replaces_eos});
    }
    if (taken.empty()) {
      // Every scanned token is ruled out: end the hypothesis (EOS at the scan's lowest
      // log-prob), or insert what is missing, rather than lose the beam.
      const float lowest = row_log_probs[scanned - 1];
      if (insertion >= 0) {
        out.push_back({score(lowest), b, constraints_->next_token(state, insertion), insertion});
      } else {
        out.push_back({score(lowest), b, eos_id_, -1});
      }
    }
  }
}

}  // namespace rpt
