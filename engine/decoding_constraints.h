// Constraints on what a translation must contain: phrases of target ids (a placeholder, a tag, an
// escape) that must occur an exact number of times, or texts (a glossary target) that count
// wherever the decoded text holds them. The beam search drops a candidate that would complete a
// phrase too often (or a closing one without its opening one), inserts a missing phrase where the
// model would end (first token in EOS's place, the rest forced), and forces the missing phrases
// when only as many steps are left before max_length. No constraints: the plain search, no cost.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace rpt {

struct PhraseConstraint {
  std::vector<int> ids;  // target ids, non-empty
  int count = 1;         // occurrences required, exactly (0: the phrase is banned)
  // Index of the constraint whose occurrences must stay ahead of this one's (a closing tag's
  // opening tag), or -1.
  int opener = -1;
  // Non-empty: the phrase is text, matched in the decoded output (any of these spellings, e.g.
  // a term and its capitalised form) whatever its segmentation; `ids` is then the segmentation
  // an insertion forces. Needs the constraints' token texts.
  std::vector<std::string> texts = {};
};

// One hypothesis's progress; copied with its beam.
struct ConstraintState {
  std::vector<int> emitted;  // [constraints]: completed occurrences
  // [constraints]: longest proper phrase prefix that ends the output (a completed occurrence
  // leaves the phrase's longest border).
  std::vector<int> matched;
  int forcing = -1;  // the constraint being inserted, -1: none
  int forced = 0;    // of a text phrase being inserted: its ids forced so far
  // A text phrase came in EOS's place: the hypothesis inserts whatever else is missing and ends
  // (the model had finished; text it would write after the insertion is not wanted).
  bool ending = false;
  // [text spellings of all text phrases]: bytes of the spelling that end the output (KMP).
  std::vector<int> text_matched;
};

class DecodingConstraints {
 public:
  // Throws InvalidArgument for an empty phrase, a negative count or a bad opener.
  // `banned_tokens`: tokens the translation must not contain at all (checked by one binary
  // search; a long list costs nothing per step).
  // `token_texts` ([vocabulary]: each piece's text, "▁" as a space, a byte piece as its byte)
  // is needed by text phrases only.
  explicit DecodingConstraints(std::vector<PhraseConstraint> phrases,
                               std::vector<int> banned_tokens = {},
                               std::shared_ptr<const std::vector<std::string>> token_texts = {});

  int size() const { return static_cast<int>(phrases_.size()); }
  // Constraints with a count above 0 (the others only ban).
  int required() const { return required_; }
  bool empty() const { return phrases_.empty() && banned_.empty(); }
  int banned() const { return static_cast<int>(banned_.size()); }
  const std::vector<PhraseConstraint>& phrases() const { return phrases_; }

  ConstraintState initial_state() const;
  // Tokens still to emit, each missing phrase counted from its current progress.
  int missing_tokens(const ConstraintState& state) const;
  bool satisfied(const ConstraintState& state) const;
  // False when appending `token` would complete a phrase beyond its count or a closing phrase
  // ahead of its opening one.
  bool allows(const ConstraintState& state, int token) const;
  // True when `token` continues a phrase still missing.
  bool advances_missing(const ConstraintState& state, int token) const;
  // The constraint to insert next (the one being forced, else the first missing one whose
  // opener is ahead), or -1 when nothing is missing (or nothing can be inserted).
  int next_insertion(const ConstraintState& state) const;
  // That constraint's next token.
  int next_token(const ConstraintState& state, int constraint) const;
  bool is_text(int constraint) const {
    return !phrases_[static_cast<std::size_t>(constraint)].texts.empty();
  }
  // Appends `token`; `insertion` >= 0 marks the token as inserted for that constraint, which is
  // then forced until its phrase completes.
  void advance(ConstraintState& state, int token, int insertion) const;

 private:
  // The phrase-prefix length after `token` follows a prefix of length `matched` (KMP).
  int step(int constraint, int matched, int token) const;
  // A text phrase: occurrences `token` completes from `state`, and the new prefixes in `next`
  // (its spellings' slots of text_matched) when non-null.
  // `advanced` (when non-null) is set when a spelling's prefix grew or completed.
  int text_step(const ConstraintState& state, int constraint, int token, std::vector<int>* next,
                bool* advanced) const;

  std::vector<PhraseConstraint> phrases_;
  std::vector<int> banned_;  // sorted
  int required_ = 0;
  std::vector<std::vector<int>> failure_;  // [constraints][phrase length]: KMP failure links
  std::shared_ptr<const std::vector<std::string>> token_texts_;
  // Text phrases: each spelling's slot in ConstraintState::text_matched and KMP failure links.
  std::vector<int> first_slot_;                 // [constraints]
  std::vector<std::vector<int>> text_failure_;  // [slots][spelling bytes]
  std::vector<const std::string*> slot_text_;   // [slots]
};

}  // namespace rpt
