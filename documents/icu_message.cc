#include "documents/icu_message.h"

#include <unicode/messagepattern.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>
#include <unicode/utf16.h>
#include <unicode/utf8.h>

#include <cstdint>
#include <string>

#include "spans/protected_spans.h"

namespace rpt::documents {
namespace {

using Ranges = std::vector<std::pair<std::size_t, std::size_t>>;

// Deeper braces are not parsed: ICU's parser recurses once per level (a hostile text of thousands
// of nested messages would exhaust a thread's stack), and no catalogue nests cases this deep.
constexpr int kMaxBraceDepth = 32;

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// A cheap first look, before ICU parses anything: a '{' and a '}' at the blank edges, and braces
// nested no deeper than kMaxBraceDepth (quoted braces counted too: an upper bound).
bool may_be_one_message(std::string_view text) {
  std::size_t first = 0;
  std::size_t last = text.size();
  while (first < last && is_blank(text[first])) ++first;
  while (last > first && is_blank(text[last - 1])) --last;
  if (last - first < 2 || text[first] != '{' || text[last - 1] != '}') return false;
  int depth = 0;
  for (std::size_t i = first; i < last; ++i) {
    if (text[i] == '{' && ++depth > kMaxBraceDepth) return false;
    if (text[i] == '}') --depth;
  }
  return true;
}

// `text` with its tags' bytes replaced by 'X', as ICU should read it: an inline element of an XLIFF
// unit is markup, not MessageFormat ("other {<x id=\"INTERPOLATION\" equiv-text=\"{{minutes}}\"/>
// minutes ago}": Angular's extracted plurals). The tags are found with their braces read as
// blanks, so that the message around them is not one span.
std::string without_tags(std::string_view text) {
  std::string masked(text);
  if (text.find('<') == std::string_view::npos) return masked;
  std::string braces_blank(text);
  for (char& c : braces_blank) {
    if (c == '{' || c == '}') c = ' ';
  }
  for (const ProtectedSpan& span : find_protected_spans(braces_blank, {.accelerators = false})) {
    if (span.kind == SpanKind::kTag)
      masked.replace(span.begin, span.end - span.begin, span.end - span.begin, 'X');
  }
  return masked;
}

bool has_cases(UMessagePatternArgType type) {
  return type == UMSGPAT_ARG_TYPE_PLURAL || type == UMSGPAT_ARG_TYPE_SELECT ||
         type == UMSGPAT_ARG_TYPE_SELECTORDINAL;
}

// The case texts of a parsed message, in UTF-8 offsets.
class CaseReader {
 public:
  CaseReader(const icu::MessagePattern& pattern, const icu::UnicodeString& utf16,
             std::vector<std::size_t> utf8_offsets)
      : pattern_(pattern), utf16_(utf16), utf8_offsets_(std::move(utf8_offsets)) {}

  // Appends to `cases` the case texts of the message whose MSG_START is part `start` when that
  // message is exactly one argument with cases, blank around it; false (nothing appended) if not.
  bool read_message(int32_t start, Ranges& cases) const {
    const int32_t limit = pattern_.getLimitPartIndex(start);
    const int32_t argument = start + 1;
    if (argument >= limit || pattern_.getPartType(argument) != UMSGPAT_PART_TYPE_ARG_START ||
        !has_cases(pattern_.getPart(argument).getArgType())) {
      return false;
    }
    const int32_t argument_limit = pattern_.getLimitPartIndex(argument);
    if (argument_limit + 1 != limit ||
        !blank(pattern_.getPart(start).getLimit(), pattern_.getPart(argument).getIndex()) ||
        !blank(pattern_.getPart(argument_limit).getLimit(), pattern_.getPart(limit).getIndex())) {
      return false;
    }
    for (int32_t part = argument + 1; part < argument_limit; ++part) {
      if (pattern_.getPartType(part) != UMSGPAT_PART_TYPE_MSG_START) continue;
      const int32_t case_limit = pattern_.getLimitPartIndex(part);
      if (!read_message(part, cases)) {
        cases.emplace_back(utf8_offsets_[pattern_.getPart(part).getLimit()],
                           utf8_offsets_[pattern_.getPart(case_limit).getIndex()]);
      }
      part = case_limit;
    }
    return true;
  }

 private:
  bool blank(int32_t begin, int32_t end) const {
    for (int32_t i = begin; i < end; ++i) {
      if (!u_isUWhiteSpace(utf16_.charAt(i))) return false;
    }
    return true;
  }

  const icu::MessagePattern& pattern_;
  const icu::UnicodeString& utf16_;
  std::vector<std::size_t> utf8_offsets_;  // [i]: where UTF-16 unit i starts in the UTF-8 text
};

}  // namespace

std::vector<std::pair<std::size_t, std::size_t>> icu_case_texts(std::string_view original) {
  if (!may_be_one_message(original)) return {};
  const std::string masked = without_tags(original);  // the same length: the same offsets
  const std::string_view text = masked;
  icu::UnicodeString utf16;
  std::vector<std::size_t> utf8_offsets;
  const auto length = static_cast<int32_t>(text.size());
  for (int32_t i = 0; i < length;) {
    const int32_t begin = i;
    UChar32 c = 0;
    U8_NEXT(text.data(), i, length, c);
    if (c < 0) return {};
    utf16.append(c);
    utf8_offsets.insert(utf8_offsets.end(), U16_LENGTH(c), static_cast<std::size_t>(begin));
  }
  utf8_offsets.push_back(text.size());
  UErrorCode status = U_ZERO_ERROR;
  icu::MessagePattern pattern(UMSGPAT_APOS_DOUBLE_OPTIONAL, status);
  pattern.parse(utf16, nullptr, status);
  if (U_FAILURE(status) || pattern.countParts() == 0) return {};
  Ranges cases;
  if (!CaseReader(pattern, utf16, std::move(utf8_offsets)).read_message(0, cases)) return {};
  return cases;
}

}  // namespace rpt::documents
