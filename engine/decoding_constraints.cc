#include "engine/decoding_constraints.h"

#include <algorithm>

#include "kernels/errors.h"

namespace rpt {

DecodingConstraints::DecodingConstraints(std::vector<PhraseConstraint> phrases,
                                         std::vector<int> banned_tokens)
    : phrases_(std::move(phrases)), banned_(std::move(banned_tokens)) {
  std::sort(banned_.begin(), banned_.end());
  const int n = size();
  for (int c = 0; c < n; ++c) {
    const PhraseConstraint& p = phrases_[static_cast<std::size_t>(c)];
    RPT_CHECK(!p.ids.empty(), InvalidArgument, "constraint ", c, " has an empty phrase");
    RPT_CHECK(p.count >= 0, InvalidArgument, "constraint ", c, " has a negative count");
    RPT_CHECK(p.opener >= -1 && p.opener < n && p.opener != c, InvalidArgument, "constraint ", c,
              " has a bad opener ", p.opener);
    if (p.count > 0) ++required_;
    // failure[i]: length of the longest proper prefix of ids[0..i] that is also its suffix.
    std::vector<int> failure(p.ids.size(), 0);
    for (std::size_t i = 1, k = 0; i < p.ids.size(); ++i) {
      while (k > 0 && p.ids[i] != p.ids[k]) k = static_cast<std::size_t>(failure[k - 1]);
      if (p.ids[i] == p.ids[k]) ++k;
      failure[i] = static_cast<int>(k);
    }
    failure_.push_back(std::move(failure));
  }
}

ConstraintState DecodingConstraints::initial_state() const {
  ConstraintState state;
  state.emitted.assign(phrases_.size(), 0);
  state.matched.assign(phrases_.size(), 0);
  return state;
}

int DecodingConstraints::step(int constraint, int matched, int token) const {
  const auto c = static_cast<std::size_t>(constraint);
  const std::vector<int>& ids = phrases_[c].ids;
  auto k = static_cast<std::size_t>(matched);
  while (k > 0 && ids[k] != token) k = static_cast<std::size_t>(failure_[c][k - 1]);
  if (ids[k] == token) ++k;
  return static_cast<int>(k);
}

int DecodingConstraints::missing_tokens(const ConstraintState& state) const {
  int missing = 0;
  for (std::size_t c = 0; c < phrases_.size(); ++c) {
    const int left = phrases_[c].count - state.emitted[c];
    if (left <= 0) continue;
    const int length = static_cast<int>(phrases_[c].ids.size());
    missing += left * length - state.matched[c];
  }
  return missing;
}

bool DecodingConstraints::satisfied(const ConstraintState& state) const {
  for (std::size_t c = 0; c < phrases_.size(); ++c) {
    if (state.emitted[c] != phrases_[c].count) return false;
  }
  return true;
}

bool DecodingConstraints::allows(const ConstraintState& state, int token) const {
  if (std::binary_search(banned_.begin(), banned_.end(), token)) return false;
  for (int c = 0; c < size(); ++c) {
    const auto i = static_cast<std::size_t>(c);
    const int length = static_cast<int>(phrases_[i].ids.size());
    if (step(c, state.matched[i], token) != length) continue;
    if (state.emitted[i] >= phrases_[i].count) return false;
    const int opener = phrases_[i].opener;
    if (opener >= 0 && state.emitted[i] >= state.emitted[static_cast<std::size_t>(opener)]) {
      return false;
    }
  }
  return true;
}

bool DecodingConstraints::advances_missing(const ConstraintState& state, int token) const {
  for (int c = 0; c < size(); ++c) {
    const auto i = static_cast<std::size_t>(c);
    if (state.emitted[i] < phrases_[i].count &&
        step(c, state.matched[i], token) > state.matched[i]) {
      return true;
    }
  }
  return false;
}

int DecodingConstraints::next_insertion(const ConstraintState& state) const {
  if (state.forcing >= 0) return state.forcing;
  for (int c = 0; c < size(); ++c) {
    const auto i = static_cast<std::size_t>(c);
    if (state.emitted[i] >= phrases_[i].count) continue;
    const int opener = phrases_[i].opener;
    if (opener >= 0 && state.emitted[i] >= state.emitted[static_cast<std::size_t>(opener)]) {
      continue;  // its opening phrase comes first (it is missing too, and earlier)
    }
    return c;
  }
  return -1;
}

int DecodingConstraints::next_token(const ConstraintState& state, int constraint) const {
  const auto c = static_cast<std::size_t>(constraint);
  const std::vector<int>& ids = phrases_[c].ids;
  return ids[static_cast<std::size_t>(state.matched[c])];
}

void DecodingConstraints::advance(ConstraintState& state, int token, int insertion) const {
  if (insertion >= 0) state.forcing = insertion;
  for (int c = 0; c < size(); ++c) {
    const auto i = static_cast<std::size_t>(c);
    state.matched[i] = step(c, state.matched[i], token);
    const auto length = phrases_[i].ids.size();
    if (state.matched[i] == static_cast<int>(length)) {
      ++state.emitted[i];
      if (state.forcing == c) state.forcing = -1;
      // Progress toward a next occurrence: the phrase's longest border (0 for one token).
      state.matched[i] = failure_[i][length - 1];
    }
  }
}

}  // namespace rpt
