#include "engine/unreadable_words.h"

#include <unicode/uchar.h>
#include <unicode/utf8.h>

#include <algorithm>

namespace rpt {
namespace {

bool is_word_character(UChar32 c) {
  if (u_isalpha(c)) return true;
  const auto type = static_cast<UCharCategory>(u_charType(c));
  return type == U_NON_SPACING_MARK || type == U_COMBINING_SPACING_MARK ||
         type == U_ENCLOSING_MARK || c == 0x200C || c == 0x200D;
}

// The words of `source` (byte ranges) that hold a byte outside ASCII, outside `taken`.
ByteSpans non_ascii_words(std::string_view source, const ByteSpans& taken) {
  ByteSpans words;
  auto next_taken = taken.begin();
  const auto length = static_cast<int32_t>(source.size());
  const auto* bytes = reinterpret_cast<const uint8_t*>(source.data());
  int32_t i = 0;
  while (i < length) {
    while (next_taken != taken.end() && next_taken->second <= static_cast<std::size_t>(i)) {
      ++next_taken;
    }
    if (next_taken != taken.end() && next_taken->first <= static_cast<std::size_t>(i)) {
      i = static_cast<int32_t>(next_taken->second);  // inside a span: skipped whole
      continue;
    }
    const int32_t begin = i;
    const std::size_t stop =
        next_taken == taken.end() ? source.size() : next_taken->first;  // a word ends at a span
    bool non_ascii = false;
    int32_t end = i;
    while (static_cast<std::size_t>(end) < stop) {
      int32_t at = end;
      UChar32 c = 0;
      U8_NEXT(bytes, at, length, c);
      if (c < 0 || !is_word_character(c)) break;
      non_ascii = non_ascii || c >= 0x80;
      end = at;
    }
    if (end == begin) {  // not a word character: the next one
      U8_FWD_1(bytes, i, length);
      continue;
    }
    if (non_ascii)
      words.emplace_back(static_cast<std::size_t>(begin), static_cast<std::size_t>(end));
    i = end;
  }
  return words;
}

}  // namespace

ByteSpans add_unreadable_words(std::string_view source, const ByteSpans& taken,
                               const std::function<bool(std::string_view word)>& readable,
                               std::vector<ProtectedSpan>& spans) {
  ByteSpans added;
  if (std::all_of(source.begin(), source.end(),
                  [](char c) { return static_cast<unsigned char>(c) < 0x80; })) {
    return added;
  }
  ByteSpans occupied = taken;
  for (const ProtectedSpan& span : spans) occupied.emplace_back(span.begin, span.end);
  std::sort(occupied.begin(), occupied.end());
  std::vector<ProtectedSpan> words;
  for (const auto& [begin, end] : non_ascii_words(source, occupied)) {
    const std::string_view word = source.substr(begin, end - begin);
    if (readable(word)) continue;
    words.push_back({begin, end, SpanKind::kSymbol, -1});
    added.emplace_back(begin, end);
  }
  merge_spans(spans, words);
  return added;
}

}  // namespace rpt
