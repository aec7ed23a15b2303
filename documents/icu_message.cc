#include "documents/icu_message.h"

#include <unicode/locid.h>
#include <unicode/messagepattern.h>
#include <unicode/plurrule.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>
#include <unicode/utf16.h>
#include <unicode/utf8.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
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

// Every '}' of `text` closes a '{' of it, and every '{' is closed.
bool balanced(std::string_view text) {
  int depth = 0;
  for (const char c : text) {
    if (c == '{') ++depth;
    if (c == '}' && --depth < 0) return false;
  }
  return depth == 0;
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
    const int32_t argument = sole_argument(start);
    if (argument < 0) return false;
    const int32_t argument_limit = pattern_.getLimitPartIndex(argument);
    for (int32_t part = argument + 1; part < argument_limit; ++part) {
      if (pattern_.getPartType(part) != UMSGPAT_PART_TYPE_MSG_START) continue;
      const int32_t case_limit = pattern_.getLimitPartIndex(part);
      if (!read_message(part, cases)) cases.emplace_back(limit_of(part), begin_of(case_limit));
      part = case_limit;
    }
    return true;
  }

  // The ARG_START part of the message whose MSG_START is part `start` when that message is
  // exactly one argument with cases, blank around it; -1 if not.
  int32_t sole_argument(int32_t start) const {
    const int32_t limit = pattern_.getLimitPartIndex(start);
    const int32_t argument = start + 1;
    if (argument >= limit || pattern_.getPartType(argument) != UMSGPAT_PART_TYPE_ARG_START ||
        !has_cases(pattern_.getPart(argument).getArgType())) {
      return -1;
    }
    const int32_t argument_limit = pattern_.getLimitPartIndex(argument);
    if (argument_limit + 1 != limit ||
        !blank(pattern_.getPart(start).getLimit(), pattern_.getPart(argument).getIndex()) ||
        !blank(pattern_.getPart(argument_limit).getLimit(), pattern_.getPart(limit).getIndex())) {
      return -1;
    }
    return argument;
  }

  // The cases of the argument whose ARG_START is `argument`: each selector ("one", "=0") with
  // its ARG_SELECTOR part and its message's MSG_START part.
  struct Case {
    std::string selector;
    int32_t selector_part = 0;
    int32_t message = 0;
  };
  std::vector<Case> selected_cases(int32_t argument) const {
    std::vector<Case> cases;
    const int32_t limit = pattern_.getLimitPartIndex(argument);
    for (int32_t part = argument + 1; part < limit; ++part) {
      if (pattern_.getPartType(part) != UMSGPAT_PART_TYPE_ARG_SELECTOR) continue;
      Case selected{.selector = {}, .selector_part = part, .message = part + 1};
      pattern_.getSubstring(pattern_.getPart(part)).toUTF8String(selected.selector);
      while (selected.message < limit &&
             pattern_.getPartType(selected.message) != UMSGPAT_PART_TYPE_MSG_START) {
        ++selected.message;  // past an explicit value's number
      }
      if (selected.message >= limit) break;
      part = pattern_.getLimitPartIndex(selected.message);
      cases.push_back(std::move(selected));
    }
    return cases;
  }

  // The bytes of case `message`'s text (between its braces).
  std::pair<std::size_t, std::size_t> text_of(int32_t message) const {
    return {limit_of(message), begin_of(pattern_.getLimitPartIndex(message))};
  }

  // The '#' parts of case `message`'s own text; empty when it holds an argument of its own.
  std::optional<std::vector<int32_t>> number_parts(int32_t message) const {
    std::vector<int32_t> numbers;
    const int32_t limit = pattern_.getLimitPartIndex(message);
    for (int32_t part = message + 1; part < limit; ++part) {
      const UMessagePatternPartType type = pattern_.getPartType(part);
      if (type == UMSGPAT_PART_TYPE_ARG_START) return std::nullopt;
      if (type == UMSGPAT_PART_TYPE_REPLACE_NUMBER) numbers.push_back(part);
    }
    return numbers;
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

// The case of `cases` whose selector is `selector`, else cases.end().
std::vector<ParsedMessage::Case>::const_iterator case_named(
    const std::vector<ParsedMessage::Case>& cases, std::string_view selector) {
  return std::find_if(cases.begin(), cases.end(),
                      [&](const ParsedMessage::Case& c) { return c.selector == selector; });
}

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

// The cardinal plural rules of `language` (BCP 47 or POSIX: "ru", "pt-BR", "de_DE.UTF-8"); null
// when ICU does not know it.
std::unique_ptr<icu::PluralRules> plural_rules(std::string_view language) {
  std::string tag(language.substr(0, language.find_first_of(".@")));
  std::replace(tag.begin(), tag.end(), '_', '-');
  UErrorCode status = U_ZERO_ERROR;
  const icu::Locale locale = icu::Locale::forLanguageTag(tag, status);
  if (U_FAILURE(status) || locale.isBogus()) return nullptr;
  std::unique_ptr<icu::PluralRules> rules(
      icu::PluralRules::forLocale(locale, UPLURAL_TYPE_CARDINAL, status));
  return U_SUCCESS(status) ? std::move(rules) : nullptr;
}

// The number shown for `keyword`: its first integer sample of at least 2 (a model is likelier to
// write 1 and 0 as words), else its first integer, that `accept` takes; empty when none does.
std::string sample_number(icu::PluralRules& rules, const std::string& keyword,
                          const std::function<bool(const std::string&)>& accept) {
  constexpr int32_t kSamples = 32;
  double samples[kSamples];
  UErrorCode status = U_ZERO_ERROR;
  const int32_t count =
      rules.getSamples(icu::UnicodeString::fromUTF8(keyword), samples, kSamples, status);
  if (U_FAILURE(status)) return {};
  std::string first_integer;
  for (int32_t i = 0; i < count; ++i) {
    const double value = samples[i];
    if (value != std::floor(value) || value < 0 || value > 1e12) continue;
    const std::string written = std::to_string(static_cast<long long>(value));
    if (!accept(written)) continue;
    if (value >= 2) return written;
    if (first_integer.empty()) first_integer = written;
  }
  return first_integer;
}

// The categories in CLDR's order, so that added cases read as translators write them.
constexpr const char* kPluralCategories[] = {"zero", "one", "two", "few", "many"};

// Whether `text` holds at `at` a separator between digit groups ("1 000", "1.000", "1,000",
// "1'000", no-break spaces) with a digit after it: its length, else 0.
std::size_t group_separator_at(std::string_view text, std::size_t at) {
  static constexpr std::string_view kSeparators[] = {" ", ".",        ",",
                                                     "'", "\xC2\xA0", "\xE2\x80\xAF"};
  for (std::string_view separator : kSeparators) {
    const std::size_t after = at + separator.size();
    if (text.substr(at).starts_with(separator) && after < text.size() &&
        std::isdigit(static_cast<unsigned char>(text[after]))) {
      return separator.size();
    }
  }
  return 0;
}

// `text` with every number that reads as `number` (digit groups joined) written as '#';
// nullopt when there is none.
std::optional<std::string> with_number_as_hash(std::string_view text, const std::string& number) {
  std::string out;
  bool found = false;
  for (std::size_t i = 0; i < text.size();) {
    const bool starts_number = std::isdigit(static_cast<unsigned char>(text[i])) &&
                               (i == 0 || !std::isdigit(static_cast<unsigned char>(text[i - 1])));
    if (!starts_number) {
      out.push_back(text[i++]);
      continue;
    }
    std::string digits;
    std::size_t end = i;
    while (end < text.size()) {
      if (std::isdigit(static_cast<unsigned char>(text[end]))) {
        digits.push_back(text[end++]);
      } else if (const std::size_t separator = group_separator_at(text, end); separator > 0) {
        end += separator;
      } else {
        break;
      }
    }
    if (digits == number) {
      out.push_back('#');
      found = true;
    } else {
      out.append(text.substr(i, end - i));
    }
    i = end;
  }
  return found ? std::optional<std::string>(std::move(out)) : std::nullopt;
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
  // Outside a plural '#' is text and a quote quotes, and a lone brace is text to ICU at the top
  // level: inside a case they would mean otherwise.
  if (before.find_first_of("#'") != std::string_view::npos ||
      after.find_first_of("#'") != std::string_view::npos || !balanced(before) ||
      !balanced(after)) {
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
  // What segment_text segments case by case, or nothing: the text stays as it came.
  if (icu_case_texts(lifted).empty()) return std::nullopt;
  return lifted;
}

std::optional<MessageWithTargetCases> with_target_plural_cases(std::string_view text,
                                                               std::string_view target_language) {
  if (target_language.empty() || text.find("plural") == std::string_view::npos ||
      !may_be_one_message(text)) {
    return std::nullopt;
  }
  ParsedMessage message;
  if (!message.parse(text)) return std::nullopt;
  const int32_t argument = message.sole_argument(0);
  if (argument < 0 || message.pattern().getPart(argument).getArgType() != UMSGPAT_ARG_TYPE_PLURAL) {
    return std::nullopt;
  }
  const auto cases = message.selected_cases(argument);
  const auto other = case_named(cases, "other");
  if (other == cases.end()) return std::nullopt;
  const std::optional<std::vector<int32_t>> numbers = message.number_parts(other->message);
  if (!numbers || numbers->empty()) return std::nullopt;
  const std::unique_ptr<icu::PluralRules> rules = plural_rules(target_language);
  if (!rules) return std::nullopt;

  MessageWithTargetCases result;
  std::string added;
  const auto [other_begin, other_end] = message.text_of(other->message);
  const std::string_view other_text = text.substr(other_begin, other_end - other_begin);
  for (const char* category : kPluralCategories) {
    const std::string keyword = category;
    if (!rules->isKeyword(icu::UnicodeString::fromUTF8(keyword)) ||
        case_named(cases, keyword) != cases.end()) {
      continue;
    }
    // A number the case already shows would become '#' too when the translation comes back.
    const std::string number = sample_number(
        *rules, keyword, [&](const std::string& n) { return !with_number_as_hash(other_text, n); });
    if (number.empty()) continue;
    added.append(keyword).append(" {");
    std::size_t done = other_begin;
    for (const int32_t part : *numbers) {
      added.append(text.substr(done, message.begin_of(part) - done)).append(number);
      done = message.limit_of(part);
    }
    added.append(text.substr(done, other_end - done)).append("} ");
    result.samples.push_back({keyword, number});
  }
  if (result.samples.empty()) return std::nullopt;
  const std::size_t at = message.begin_of(other->selector_part);
  result.text.append(text.substr(0, at)).append(added).append(text.substr(at));
  return result;
}

std::string with_plural_samples_restored(std::string_view translation,
                                         const std::vector<PluralSample>& samples) {
  std::string restored(translation);
  if (samples.empty() || !may_be_one_message(translation)) return restored;
  ParsedMessage message;
  if (!message.parse(translation)) return restored;
  const int32_t argument = message.sole_argument(0);
  if (argument < 0) return restored;
  const auto cases = message.selected_cases(argument);
  const auto other = case_named(cases, "other");
  if (other == cases.end()) return restored;
  const auto [other_begin, other_end] = message.text_of(other->message);
  const std::string_view other_text = translation.substr(other_begin, other_end - other_begin);
  // Edits from the end backwards, so that earlier offsets hold.
  for (auto c = cases.rbegin(); c != cases.rend(); ++c) {
    const auto sample = std::find_if(samples.begin(), samples.end(), [&](const PluralSample& s) {
      return s.keyword == c->selector;
    });
    if (sample == samples.end()) continue;
    const auto [begin, end] = message.text_of(c->message);
    const std::optional<std::string> with_hash =
        with_number_as_hash(translation.substr(begin, end - begin), sample->number);
    const std::string_view text = with_hash ? std::string_view(*with_hash) : other_text;
    if (text == other_text) {  // the selector, its case and the blanks after it go
      const std::size_t from = message.begin_of(c->selector_part);
      std::size_t to = message.limit_of(message.pattern().getLimitPartIndex(c->message));
      while (to < restored.size() && is_blank(restored[to])) ++to;
      restored.erase(from, to - from);
    } else {
      restored.replace(begin, end - begin, text);
    }
  }
  return restored;
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
