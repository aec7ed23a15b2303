#include "documents/icu_message.h"

#include <unicode/messagepattern.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>
#include <unicode/utf16.h>
#include <unicode/utf8.h>

#include <cstdint>
#include <optional>
#include <string>

#include "spans/protected_spans.h"

namespace rpt::documents {
namespace {

using Ranges = std::vector<std::pair<std::size_t, std::size_t>>;

// Deeper braces are not parsed: ICU's parser recurses once per level (a hostile text of thousands
// of nested messages would exhaust a thread's stack), and no catalogue nests cases this deep.
constexpr int kMaxBraceDepth = 32;
// A sentence is moved into at most this many cases, of at most this many bytes in all.
constexpr std::size_t kMaxLiftedCases = 32;
constexpr std::size_t kMaxLiftedBytes = 4096;

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// What an apostrophe before it quotes (ICU's default DOUBLE_OPTIONAL apostrophe mode).
bool is_icu_syntax(char c) { return c == '{' || c == '}' || c == '#' || c == '|'; }

// Braces nested no deeper than kMaxBraceDepth (quoted braces counted too: an upper bound).
bool shallow(std::string_view text) {
  int depth = 0;
  for (const char c : text) {
    if (c == '{' && ++depth > kMaxBraceDepth) return false;
    if (c == '}') --depth;
  }
  return true;
}

// `text` without its blank edges.
std::pair<std::size_t, std::size_t> trimmed(std::string_view text) {
  std::size_t first = 0;
  std::size_t last = text.size();
  while (first < last && is_blank(text[first])) ++first;
  while (last > first && is_blank(text[last - 1])) --last;
  return {first, last};
}

// A cheap first look, before ICU parses anything: a '{' and a '}' at the blank edges.
bool may_be_one_message(std::string_view text) {
  const auto [first, last] = trimmed(text);
  return last - first >= 2 && text[first] == '{' && text[last - 1] == '}' && shallow(text);
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
    if (span.kind == SpanKind::kTag) {
      masked.replace(span.begin, span.end - span.begin, span.end - span.begin, 'X');
    }
  }
  return masked;
}

bool has_cases(UMessagePatternArgType type) {
  return type == UMSGPAT_ARG_TYPE_PLURAL || type == UMSGPAT_ARG_TYPE_SELECT ||
         type == UMSGPAT_ARG_TYPE_SELECTORDINAL;
}

// A text parsed by ICU's MessagePattern, its offsets in UTF-8.
class ParsedMessage {
 public:
  // False when ICU cannot parse `text` (its tags masked: without_tags) or it is not UTF-8.
  bool parse(std::string_view original) {
    const std::string masked = without_tags(original);  // the same length: the same offsets
    const auto length = static_cast<int32_t>(masked.size());
    for (int32_t i = 0; i < length;) {
      const int32_t begin = i;
      UChar32 c = 0;
      U8_NEXT(masked.data(), i, length, c);
      if (c < 0) return false;
      utf16_.append(c);
      utf8_offsets_.insert(utf8_offsets_.end(), U16_LENGTH(c), static_cast<std::size_t>(begin));
    }
    utf8_offsets_.push_back(masked.size());
    UErrorCode status = U_ZERO_ERROR;
    pattern_.parse(utf16_, nullptr, status);
    return U_SUCCESS(status) && pattern_.countParts() > 0;
  }

  const icu::MessagePattern& pattern() const { return pattern_; }
  std::size_t begin_of(int32_t part) const {
    return utf8_offsets_[pattern_.getPart(part).getIndex()];
  }
  std::size_t limit_of(int32_t part) const {
    return utf8_offsets_[pattern_.getPart(part).getLimit()];
  }

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
      if (!read_message(part, cases)) cases.emplace_back(limit_of(part), begin_of(case_limit));
      part = case_limit;
    }
    return true;
  }

  // The arguments with cases at the message's top level: their ARG_START parts.
  std::vector<int32_t> top_level_cases() const {
    std::vector<int32_t> arguments;
    const int32_t limit = pattern_.getLimitPartIndex(0);
    for (int32_t part = 1; part < limit; ++part) {
      if (pattern_.getPartType(part) != UMSGPAT_PART_TYPE_ARG_START) continue;
      if (has_cases(pattern_.getPart(part).getArgType())) arguments.push_back(part);
      part = pattern_.getLimitPartIndex(part);
    }
    return arguments;
  }

  // The case texts directly of the argument whose ARG_START is `argument`.
  Ranges cases_of(int32_t argument) const {
    Ranges cases;
    const int32_t limit = pattern_.getLimitPartIndex(argument);
    for (int32_t part = argument + 1; part < limit; ++part) {
      if (pattern_.getPartType(part) != UMSGPAT_PART_TYPE_MSG_START) continue;
      const int32_t case_limit = pattern_.getLimitPartIndex(part);
      cases.emplace_back(limit_of(part), begin_of(case_limit));
      part = case_limit;
    }
    return cases;
  }

 private:
  bool blank(int32_t begin, int32_t end) const {
    for (int32_t i = begin; i < end; ++i) {
      if (!u_isUWhiteSpace(utf16_.charAt(i))) return false;
    }
    return true;
  }

  UErrorCode init_ = U_ZERO_ERROR;
  icu::MessagePattern pattern_{UMSGPAT_APOS_DOUBLE_OPTIONAL, init_};
  icu::UnicodeString utf16_;
  std::vector<std::size_t> utf8_offsets_;  // [i]: where UTF-16 unit i starts in the UTF-8 text
};

// True when an apostrophe in `text` would start quoted text: a run of an odd number of them
// before '{', '}', '#' or '|' (`next` stands after the text's end; "''" is one literal
// apostrophe).
bool has_quoting_apostrophe(std::string_view text, char next) {
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] != '\'') {
      ++i;
      continue;
    }
    std::size_t run = 0;
    while (i < text.size() && text[i] == '\'') ++i, ++run;
    const char after = i < text.size() ? text[i] : next;
    if (run % 2 == 1 && is_icu_syntax(after)) return true;
  }
  return false;
}

}  // namespace

std::vector<std::pair<std::size_t, std::size_t>> icu_case_texts(std::string_view text) {
  if (!may_be_one_message(text)) return {};
  ParsedMessage message;
  if (!message.parse(text)) return {};
  Ranges cases;
  if (!message.read_message(0, cases)) return {};
  return cases;
}

std::optional<std::string> with_sentence_in_cases(std::string_view text) {
  const auto [first, last] = trimmed(text);
  if (last - first > kMaxLiftedBytes || text.find('{') == std::string_view::npos ||
      (text.find("plural") == std::string_view::npos &&
       text.find("select") == std::string_view::npos) ||
      may_be_one_message(text) || !shallow(text)) {
    return std::nullopt;
  }
  ParsedMessage message;
  if (!message.parse(text)) return std::nullopt;
  const std::vector<int32_t> arguments = message.top_level_cases();
  if (arguments.size() != 1) return std::nullopt;
  const int32_t argument = arguments[0];
  const std::size_t begin = message.begin_of(argument);
  const std::size_t end = message.limit_of(message.pattern().getLimitPartIndex(argument));
  const std::string_view before = text.substr(first, begin - first);
  const std::string_view after = text.substr(end, last - end);
  // Outside a plural '#' is text and a quote quotes: inside a case they would mean otherwise.
  if (before.find_first_of("#'") != std::string_view::npos ||
      after.find_first_of("#'") != std::string_view::npos) {
    return std::nullopt;
  }
  const Ranges cases = message.cases_of(argument);
  if (cases.size() > kMaxLiftedCases) return std::nullopt;
  std::string lifted(text.substr(0, first));
  std::size_t done = begin;
  for (const auto& [case_begin, case_end] : cases) {
    lifted.append(text.substr(done, case_begin - done))
        .append(before)
        .append(text.substr(case_begin, case_end - case_begin))
        .append(after);
    done = case_end;
  }
  lifted.append(text.substr(done, end - done)).append(text.substr(last));
  return lifted;
}

std::string with_case_apostrophes_escaped(std::string_view source, char source_next,
                                          std::string_view translation, char translation_next) {
  if (translation.find('\'') == std::string_view::npos ||
      has_quoting_apostrophe(source, source_next)) {
    return std::string(translation);
  }
  std::string escaped;
  escaped.reserve(translation.size() + 4);
  for (std::size_t i = 0; i < translation.size();) {
    if (translation[i] != '\'') {
      escaped.push_back(translation[i++]);
      continue;
    }
    std::size_t run = 0;
    while (i < translation.size() && translation[i] == '\'') ++i, ++run;
    const char after = i < translation.size() ? translation[i] : translation_next;
    escaped.append(run % 2 == 1 && is_icu_syntax(after) ? run + 1 : run, '\'');
  }
  return escaped;
}

}  // namespace rpt::documents
