// libFuzzer target: arbitrary bytes through segment_text in every mode (valid UTF-8 only, as the
// server gives it), then every segment cut once. Must never crash, and the text must come back
// byte for byte from its separators and segments (a sentence around an ICU message: as moved into
// its cases), each segment non-blank.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "common/text_hygiene.h"
#include "documents/icu_message.h"
#include "documents/segmenter.h"

namespace {

void check(bool condition, const char* what) {
  if (condition) return;
  std::fprintf(stderr, "segmenter: %s\n", what);
  __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rpt::documents;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (!rpt::is_valid_utf8(text)) return 0;
  const std::optional<std::string> lifted = with_sentence_in_cases(text);
  const std::string_view whole = lifted ? std::string_view(*lifted) : text;
  for (SplitSentences split : {SplitSentences::kAuto, SplitSentences::kNewlines,
                               SplitSentences::kSentences, SplitSentences::kNone}) {
    // Into Russian a plural gains cases (few, many); given back as their own translations
    // they read as "other" does and are dropped, so the round trip holds for them too. Read as
    // Markdown in the sentence mode (indented code blocks layout too).
    SegmentedText segmented =
        segment_text(text, {.split = split,
                            .language = "en",
                            .target_language = split == SplitSentences::kAuto ? "ru" : "",
                            .keep_together = {},
                            .markdown = split == SplitSentences::kSentences});
    check(segmented.separators.size() == segmented.segments.size() + 1, "separator count");
    check(join_segments(segmented, segmented.segments) == whole, "round trip");
    for (const auto& segment : segmented.segments) {
      check(!rpt::is_blank_text(segment), "blank segment");
    }
    const std::size_t count = segmented.segments.size();
    for (std::size_t i = 0; i < count; ++i) cut_segment(segmented, i);
    check(join_segments(segmented, segmented.segments) == whole, "round trip after cuts");
    for (const auto& segment : segmented.segments) {
      check(!segment.empty() && !rpt::is_blank_text(segment), "blank segment after a cut");
    }
  }
  return 0;
}
