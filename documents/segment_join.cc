// join_segments (segmenter.h): the translations put back between the separators, a message's
// cases written as ICU reads them.
#include <stdexcept>
#include <string>
#include <vector>

#include "documents/icu_message.h"
#include "documents/segmenter.h"

namespace rpt::documents {

namespace {

// The byte after a segment in its message: its separator's first, else the next segment's.
char next_byte(const std::string& separator, const std::vector<std::string>& segments,
               std::size_t next) {
  if (!separator.empty()) return separator.front();
  return next < segments.size() && !segments[next].empty() ? segments[next].front() : '\0';
}

}  // namespace

std::string join_segments(const SegmentedText& text, const std::vector<std::string>& translations) {
  if (translations.size() != text.segments.size() ||
      text.separators.size() != text.segments.size() + 1) {
    throw std::invalid_argument("join_segments: " + std::to_string(translations.size()) +
                                " translations for " + std::to_string(text.segments.size()) +
                                " segments");
  }
  std::string joined = text.separators[0];
  for (std::size_t i = 0; i < translations.size(); ++i) {
    if (text.message_cases) {
      joined += with_case_apostrophes_escaped(
          text.segments[i], next_byte(text.separators[i + 1], text.segments, i + 1),
          translations[i], next_byte(text.separators[i + 1], translations, i + 1));
    } else {
      joined += translations[i];
    }
    joined += text.separators[i + 1];
  }
  return text.plural_samples.empty() ? joined
                                     : with_plural_samples_restored(joined, text.plural_samples);
}

}  // namespace rpt::documents
