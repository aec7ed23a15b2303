#include "engine/decoding_constraints.h"

#include <algorithm>

#include "kernels/errors.h"

namespace rpt {

DecodingConstraints::DecodingConstraints(
    std::vector<PhraseConstraint> phrases, std::vector<int> banned_tokens,
    std::shared_ptr<const std::vector<std::string>> token_texts)
    : phrases_(std::move(phrases)),
      banned_(std::move(banned_tokens)),
      token_texts_(std::move(token_texts)) {
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
    first_slot_.push_back(static_cast<int>(slot_text_.size()));
    if (p.texts.empty()) continue;
    RPT_CHECK(token_texts_ != nullptr, InvalidArgument, "constraint ", c,
              " is text but no token texts were given");
    for (const std::string& text : p.texts) {
      RPT_CHECK(!text.empty(), InvalidArgument, "constraint ", c, " has an empty spelling");
      std::vector<int> text_failure(text.size(), 0);
      for (std::size_t i = 1, k = 0; i < text.size(); ++i) {
        while (k > 0 && text[i] != text[k]) k = static_cast<std::size_t>(text_failure[k - 1]);
        if (text[i] == text[k]) ++k;
        text_failure[i] = static_cast<int>(k);
      }
      text_failure_.push_back(std::move(text_failure));
      slot_text_.push_back(&text);
    }
  }
}

ConstraintState DecodingConstraints::initial_state() const {
  ConstraintState state;
  state.emitted.assign(phrases_.size(), 0);
  state.matched.assign(phrases_.size(), 0);
  state.text_matched.assign(slot_text_.size(), 0);
  return state;
}

int DecodingConstraints::text_step(const ConstraintState& state, int constraint, int token,
                                   std::vector<int>* next, bool* advanced) const {
  const auto c = static_cast<std::size_t>(constraint);
  static const std::string kNone;
  const std::string& piece = token >= 0 && static_cast<std::size_t>(token) < token_texts_->size()
                                 ? (*token_texts_)[static_cast<std::size_t>(token)]
                                 : kNone;
  int completions = 0;
  const auto first = static_cast<std::size_t>(first_slot_[c]);
  for (std::size_t s = first; s < first + phrases_[c].texts.size(); ++s) {
    const std::string& text = *slot_text_[s];
    const std::vector<int>& failure = text_failure_[s];
    const auto before = static_cast<std::size_t>(state.text_matched[s]);
    std::size_t k = before;
    bool completed = false;
    for (const char ch : piece) {
      while (k > 0 && text[k] != ch) k = static_cast<std::size_t>(failure[k - 1]);
      if (text[k] == ch) ++k;
      if (k == text.size()) {
        ++completions;
        completed = true;
        k = static_cast<std::size_t>(failure[k - 1]);
      }
    }
    if (advanced && (completed || k > before)) *advanced = true;
    if (next) (*next)[s] = static_cast<int>(k);
  }
  return completions;
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
    if (!phrases_[c].texts.empty()) {
      missing += left * length - (state.forcing == static_cast<int>(c) ? state.forced : 0);
      continue;
    }
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
    if (is_text(c)) {
      const int completes = text_step(state, c, token, nullptr, nullptr);
      if (completes > 0 && state.emitted[i] + completes > phrases_[i].count) return false;
      continue;
    }
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
    if (state.emitted[i] >= phrases_[i].count) continue;
    if (is_text(c)) {
      bool advanced = false;
      text_step(state, c, token, nullptr, &advanced);
      if (advanced) return true;
      continue;
    }
    if (step(c, state.matched[i], token) > state.matched[i]) return true;
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
  if (!phrases_[c].texts.empty()) {
    return ids[static_cast<std::size_t>(state.forcing == constraint ? state.forced : 0)];
  }
  return ids[static_cast<std::size_t>(state.matched[c])];
}

void DecodingConstraints::advance(ConstraintState& state, int token, int insertion) const {
  if (insertion >= 0 && state.forcing != insertion) {  // an insertion starts
    state.forcing = insertion;
    state.forced = 0;
  }
  for (int c = 0; c < size(); ++c) {
    const auto i = static_cast<std::size_t>(c);
    if (is_text(c)) {
      // Reads each spelling's slot before writing it: in place is safe.
      state.emitted[i] += text_step(state, c, token, &state.text_matched, nullptr);
      if (state.forcing == c && ++state.forced >= static_cast<int>(phrases_[i].ids.size())) {
        state.forcing = -1;
        state.forced = 0;
      }
      continue;
    }
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
