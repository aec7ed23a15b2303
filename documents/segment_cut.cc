// cut_segment, cut_at_clauses and keep_as_layout (segmenter.h): a segment too long for a model
// cut at its clause marks or blanks, never inside a protected span.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/text_hygiene.h"
#include "documents/bracket_pairs.h"
#include "documents/segmenter.h"
#include "documents/unbreakable.h"

namespace rpt::documents {

namespace {

// The clause mark (, ; : and the full-width ，；：、) that starts at segment[at], or empty.
std::string_view clause_mark_at(std::string_view segment, std::size_t at) {
  static constexpr std::string_view kClauseMarks[] = {
      ",", ";", ":", "\xEF\xBC\x8C", "\xEF\xBC\x9B", "\xEF\xBC\x9A", "\xE3\x80\x81"};
  for (std::string_view mark : kClauseMarks) {
    if (segment.substr(at).starts_with(mark)) return mark;
  }
  return {};
}

// cut_segment where no cut falls in `unbreakable`.
bool cut_segment_outside(SegmentedText& text, std::size_t index, const Unbreakable& unbreakable,
                         CutPlaces places) {
  const std::string segment = text.segments[index];
  const std::size_t middle = segment.size() / 2;
  // The best cut of each kind: [cut_begin, cut_end) becomes layout.
  struct Cut {
    std::size_t begin = 0;
    std::size_t end = 0;
    bool found = false;
  };
  Cut clause;
  Cut blank;
  Cut any;
  auto closer = [middle](const Cut& best, std::size_t at) {
    const auto distance = [middle](std::size_t p) { return p > middle ? p - middle : middle - p; };
    return !best.found || distance(at) < distance(best.begin);
  };
  bool previous_blank = false;
  for (std::size_t i = 0; i < segment.size();) {
    const std::size_t at = i;
    char32_t c = 0;
    if (!next_code_point(segment, &i, &c)) i = at + 1;
    if (at > 0 && !unbreakable(at)) {
      // A clause mark and the blank after it: an ASCII mark only before blank ("1,000", "a:b"
      // are words), a full-width one also without (Chinese and Japanese have no blank).
      if (const std::string_view mark = clause_mark_at(segment, at); !mark.empty()) {
        const std::size_t run_end = skip_blank(segment, at + mark.size(), segment.size());
        const bool spaced = run_end > at + mark.size() || mark.size() > 1;
        if (spaced && run_end < segment.size() && !unbreakable(run_end) && closer(clause, at)) {
          clause = {at, run_end, true};
        }
      }
      if (is_blank_code_point(c) && !previous_blank) {  // a blank run starts
        const std::size_t run_end = skip_blank(segment, at, segment.size());
        if (run_end < segment.size() && !unbreakable(run_end) && closer(blank, at)) {
          blank = {at, run_end, true};
        }
      }
      if (closer(any, at)) any = {at, at, true};
    }
    previous_blank = is_blank_code_point(c);
  }
  const Cut cut = clause.found                                   ? clause
                  : blank.found && places != CutPlaces::kClauses ? blank
                  : places == CutPlaces::kAnywhere               ? any
                                                                 : Cut{};
  if (!cut.found) return false;
  // Blank only at the cut: the segment has no blank edge, and the cut's run is skipped whole.
  const std::size_t first_end = trim_blank_end(segment, 0, cut.begin);
  const std::size_t second_begin = skip_blank(segment, cut.end, segment.size());
  if (first_end == 0 || second_begin >= segment.size()) return false;
  text.segments[index] = segment.substr(0, first_end);
  text.segments.insert(text.segments.begin() + static_cast<long>(index) + 1,
                       segment.substr(second_begin));
  text.separators.insert(text.separators.begin() + static_cast<long>(index) + 1,
                         segment.substr(first_end, second_begin - first_end));
  return true;
}

// cut_segment, outside bracket, quotation and tag pairs only when `inside_pairs` is false.
bool cut_segment_keeping(SegmentedText& text, std::size_t index, const KeepTogether& keep_together,
                         CutPlaces places, bool inside_pairs) {
  const std::string& segment = text.segments.at(index);
  std::vector<std::pair<std::size_t, std::size_t>> kept;
  if (keep_together) kept = keep_together(segment);
  // Outside bracket and quotation pairs and tag pairs where possible (cut inside, each half
  // reached the model with a bracket that paired with nothing); then inside a bracket pair; then
  // inside a tag pair too (a whole paragraph in <p>).
  // Each try reads the whole segment: the one for brackets only where it has a pair.
  const std::vector<std::pair<std::size_t, std::size_t>> brackets = bracket_pairs(segment);
  struct Keep {
    bool tag_pairs;
    bool bracket_pairs;
  };
  for (const Keep keep : {Keep{true, true}, Keep{true, false}, Keep{false, false}}) {
    if (keep.bracket_pairs && brackets.empty()) continue;
    if (!inside_pairs && !(keep.tag_pairs && (keep.bracket_pairs || brackets.empty()))) break;
    Unbreakable unbreakable(segment, keep.tag_pairs);
    for (const auto& [first, last] : kept) unbreakable.add(first, last);
    if (keep.bracket_pairs) {
      for (const auto& [first, last] : brackets) unbreakable.add(first, last);
    }
    if (cut_segment_outside(text, index, unbreakable, places)) return true;
  }
  return false;
}

}  // namespace

bool cut_segment(SegmentedText& text, std::size_t index, const KeepTogether& keep_together,
                 CutPlaces places) {
  return cut_segment_keeping(text, index, keep_together, places, true);
}

std::size_t cut_at_clauses(SegmentedText& text, std::size_t index,
                           const KeepTogether& keep_together) {
  // The clause marks outside pairs, else those inside: "Pick one (for example, 1, 2 or 3), then
  // save" is two clauses, not five; the first part is cut further only when still too long.
  std::size_t parts = 1;
  for (const bool inside_pairs : {false, true}) {
    for (std::size_t part = index; part < index + parts;) {
      if (cut_segment_keeping(text, part, keep_together, CutPlaces::kClauses, inside_pairs)) {
        ++parts;
      } else {
        ++part;
      }
    }
    if (parts > 1) break;
  }
  return parts;
}

void keep_as_layout(SegmentedText& text, std::size_t index) {
  const auto at = static_cast<long>(index);
  text.separators[index] += text.segments.at(index) + text.separators[index + 1];
  text.separators.erase(text.separators.begin() + at + 1);
  text.segments.erase(text.segments.begin() + at);
}

}  // namespace rpt::documents
