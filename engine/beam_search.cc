#include "engine/beam_search.h"

#include <algorithm>
#include <cmath>

#include "kernels/errors.h"

namespace rpt {
namespace {

struct Candidate {
  float score;
  int beam;
  int token;
};

// Higher score first; ties go to the lower (beam, token), as a flat top-k would.
bool better(const Candidate& a, const Candidate& b) {
  if (a.score != b.score) return a.score > b.score;
  if (a.beam != b.beam) return a.beam < b.beam;
  return a.token < b.token;
}

}  // namespace

void validate(const DecodingOptions& options) {
  RPT_CHECK(options.beam_size >= 1 && options.beam_size <= kMaxBeamSize, InvalidArgument,
            "beam_size must be in [1, ", kMaxBeamSize, "], got ", options.beam_size);
  RPT_CHECK(options.n_best >= 1 && options.n_best <= options.beam_size, InvalidArgument,
            "n_best must be in [1, beam_size=", options.beam_size, "], got ", options.n_best);
  RPT_CHECK(options.max_length >= 1, InvalidArgument, "max_length must be >= 1, got ",
            options.max_length);
  RPT_CHECK(options.min_length >= 0 && options.min_length <= options.max_length,
            InvalidArgument, "min_length must be in [0, max_length=", options.max_length,
            "], got ", options.min_length);
  RPT_CHECK(std::isfinite(options.length_penalty) && options.length_penalty >= 0.0f &&
                options.length_penalty <= 10.0f,
            InvalidArgument, "length_penalty must be in [0, 10], got ", options.length_penalty);
}

BeamSearch::BeamSearch(const DecodingOptions& options, int start_id, int eos_id)
    : options_(options), start_id_(start_id), eos_id_(eos_id) {
  validate(options_);
  beams_.push_back(Beam{});  // one start row; the beam fills up after the first step
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
  for (int b = 0; b < alive(); ++b) {
    const float cumulative = beams_[static_cast<std::size_t>(b)].cumulative;
    for (int i = 0; i < width; ++i) {
      const long at = static_cast<long>(b) * stride + i;
      candidates.push_back({(log_probs[at] + cumulative) / length_penalty, b, ids[at]});
    }
  }
  std::sort(candidates.begin(), candidates.end(), better);
  candidates.resize(static_cast<std::size_t>(width));

  ++generated_;
  const bool at_max_length = generated_ >= options_.max_length;
  std::vector<Beam> next;
  std::vector<int> parents;
  for (const Candidate& c : candidates) {
    const Beam& parent = beams_[static_cast<std::size_t>(c.beam)];
    const bool ends = c.token == eos_id_;
    if (ends || at_max_length) {
      Hypothesis hypothesis{parent.ids, c.score};
      if (!ends) hypothesis.ids.push_back(c.token);
      finished_.push_back(std::move(hypothesis));
      continue;
    }
    Beam beam{parent.ids, c.score * length_penalty};
    beam.ids.push_back(c.token);
    next.push_back(std::move(beam));
    parents.push_back(c.beam);
  }
  const bool best_finished = candidates.empty() || candidates.front().token == eos_id_ ||
                             at_max_length;
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

}  // namespace rpt
