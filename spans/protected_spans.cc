// find_protected_spans: one left-to-right pass asking the recognizers of spans/span_format.h and
// spans/span_markup.h at each byte that can start a span, and taking the addresses
// spans/span_address.h and the Markdown delimiters spans/span_markdown.h found (leftmost wins,
// each recognizer returns its longest form), then tag pairing, then the accelerator marker, which
// needs the whole text to decide.
#include "spans/protected_spans.h"

#include <unicode/uchar.h>
#include <unicode/utf8.h>

#include <algorithm>
#include <cstring>
#include <string_view>
#include <vector>

#include "spans/span_address.h"
#include "spans/span_markdown.h"
#include "spans/span_option.h"
#include "spans/span_format.h"
#include "spans/span_lone_bracket.h"
#include "spans/span_markup.h"

namespace rpt {
namespace {

using spans::is_alpha;
using spans::is_ident;
using spans::is_lower;
using spans::is_upper;

// A span found by the scan, with what tag pairing needs to know.
struct Candidate {
  ProtectedSpan span;
  spans::TagShape tag;  // tag.length > 0 for a tag in angle brackets
  int markdown = -1;    // a Markdown delimiter: the index of its pair (find_markdown_pairs)
  bool known_tag = false;
  int partner = -1;  // index into the candidate vector
};

Candidate scan_at(const spans::TextFacts& facts, std::size_t at) {
  const std::string_view text = facts.text;
  spans::Match match;
  Candidate candidate;
  switch (text[at]) {
    case '%':
      match = spans::match_percent(facts, at);
      break;
    case '{':
      match = spans::match_brace(facts, at);
      break;
    case '$':
      match = spans::match_variable(text, at);
      break;
    case '&':
      match = spans::match_entity(text, at);
      break;
    case '\\':
      match = spans::match_escape(text, at);
      break;
    case '`':
      match = spans::match_code(text, at);
      break;
    case '+':
      match = spans::match_phone(text, at);
      break;
    case '#':
      match = spans::match_number_sign(text, at);
      break;
    case '0':
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
    case '7':
    case '8':
    case '9':
      match = spans::match_number(text, at);
      break;
    case '<':
      candidate.tag = spans::match_tag(text, at);
      match = {candidate.tag.length, SpanKind::kTag};
      candidate.known_tag = candidate.tag.length > 0 && spans::is_known_tag(candidate.tag.name);
      break;
    default:
      break;
  }
  candidate.span = {at, at + match.length, match.kind, -1, candidate.tag.closing};
  return candidate;
}

// Pairs each closing tag with the nearest unclosed opening tag of the same name; opening tags
// above that one on the stack stay unpaired (<p>a<br>b</p>: the <br> has no partner).
void pair_tags(std::vector<Candidate>& candidates) {
  std::vector<int> open;
  for (int i = 0; i < static_cast<int>(candidates.size()); ++i) {
    const spans::TagShape& tag = candidates[i].tag;
    if (tag.length == 0 || tag.self_closing) continue;
    if (!tag.closing) {
      open.push_back(i);
      continue;
    }
    for (auto it = open.rbegin(); it != open.rend(); ++it) {
      if (spans::same_name(candidates[*it].tag.name, tag.name)) {
        candidates[*it].partner = i;
        candidates[i].partner = *it;
        open.erase(std::next(it).base(), open.end());
        break;
      }
    }
  }
}

// Pairs the Markdown delimiters the scan kept: one whose partner another span took (a URL's
// "a_b" against "_c_") stays unpaired, and so is text.
void pair_markdown(std::vector<Candidate>& candidates, std::size_t pairs) {
  std::vector<int> opener(pairs, -1);
  for (int i = 0; i < static_cast<int>(candidates.size()); ++i) {
    Candidate& marker = candidates[i];
    if (marker.markdown < 0) continue;
    const auto pair = static_cast<std::size_t>(marker.markdown);
    if (!marker.span.closing) {
      opener[pair] = i;
    } else if (opener[pair] >= 0) {
      candidates[opener[pair]].partner = i;
      marker.partner = opener[pair];
    }
  }
}

// An unknown name in angle brackets is markup only when paired, self-closing or with attributes;
// alone it is a metavariable ("<file>") that translators translate. A Markdown delimiter without
// its partner is text (a footnote's "*", "5 * 3").
bool keep(const Candidate& c) {
  if (c.markdown >= 0) return c.partner >= 0;
  if (c.span.kind != SpanKind::kTag || c.known_tag) return true;
  return c.partner >= 0 || c.tag.self_closing || c.tag.has_attributes;
}

bool inside_url(std::string_view text, std::size_t at) {
  std::size_t begin = at;
  while (begin > 0 && text[begin - 1] != ' ') --begin;
  std::size_t end = at;
  while (end < text.size() && text[end] != ' ') ++end;
  const std::string_view token = text.substr(begin, end - begin);
  return token.find("://") != std::string_view::npos || token.starts_with("www.");
}

// '_' marks an accelerator at the start of a word of letters (_Open, Save _As, _OK) or inside a
// capitalized word (O_pen, Sa_ve); identifiers (max_length, snake_case, _float128) are not.
bool underscore_marks(std::string_view word, std::size_t underscore) {
  if (std::count(word.begin(), word.end(), '_') != 1) return false;
  for (const char c : word) {
    if (c != '_' && !is_alpha(c)) return false;
  }
  if (underscore == 0) return word.size() > 1;
  if (!is_upper(word[0]) || underscore + 1 >= word.size()) return false;
  return std::all_of(word.begin() + 1, word.end(), [](char c) { return c == '_' || is_lower(c); });
}

// What covers each byte of the text, for the accelerator search.
enum Cover : unsigned char { kFree, kByTag, kByOther };

// The position of the one accelerator marker outside `covered`, or npos when there is none or
// more than one (a conservative reading: "Tom & Jerry & Co" or two mnemonics are not markers).
std::size_t accelerator_marker(std::string_view text, const std::vector<Cover>& covered) {
  std::size_t found = std::string_view::npos;
  int count = 0;
  for (std::size_t i = 0; i < text.size() && count < 2; ++i) {
    if (covered[i]) continue;
    if (text[i] == '&') {
      if (i + 1 < text.size() && text[i + 1] == '&') {  // "&&": a literal ampersand
        ++i;
        continue;
      }
      std::size_t word_end = i + 1;
      while (word_end < text.size() && is_ident(text[word_end])) ++word_end;
      const bool query = word_end < text.size() && text[word_end] == '=';  // "?a=1&b=2"
      if (i + 1 < text.size() && is_alpha(text[i + 1]) && covered[i + 1] == kFree && !query &&
          !inside_url(text, i)) {
        found = i;
        ++count;
      }
    } else if (is_ident(text[i])) {  // one word at a time: linear however long the word is
      std::size_t end = i;
      while (end < text.size() && is_ident(text[end]) && covered[end] == kFree) ++end;
      const std::string_view word = text.substr(i, end - i);
      const std::size_t underscore = word.find('_');
      // Code rather than a label: _open(), $x_y, a context "Filtering_on|all", %1_signed,
      // %<_Atomic%>. A tag before the word is fine: <b>_Accounts</b>.
      const bool code =
          (end < text.size() && std::strchr("(|", text[end]) != nullptr) ||
          (i > 0 && (covered[i - 1] == kByOther || std::strchr("$%@-.|", text[i - 1]) != nullptr));
      if (underscore != std::string_view::npos && !code && underscore_marks(word, underscore) &&
          !inside_url(text, i)) {
        found = i + underscore;
        ++count;
      }
      i = end - 1;
    }
  }
  return count == 1 ? found : std::string_view::npos;
}

// A symbol span's first code point: Unicode "other symbol" (✓ © ° ™, most emoji), a currency or
// math symbol outside ASCII (€ £ ¥ ₹ ≤ ≠ ± → ×: a model without a piece for them wrote "€5" as
// broken UTF-8 and "£10 or ¥100" as "©10 oder ©100"), or an emoji pictograph of another category.
// ASCII's $ + < = are text every vocabulary writes ($ and < open spans of their own).
bool opens_symbol(char32_t c) {
  const auto code = static_cast<UChar32>(c);
  const auto type = static_cast<UCharCategory>(u_charType(code));
  return type == U_OTHER_SYMBOL ||
         (c >= 0x80 && (type == U_CURRENCY_SYMBOL || type == U_MATH_SYMBOL)) ||
         u_hasBinaryProperty(code, UCHAR_EXTENDED_PICTOGRAPHIC);
}

// What continues an emoji sequence: variation selectors, skin tones, tags, keycap, and a zero
// width joiner followed by another pictograph (👩‍💻).
bool continues_symbol(char32_t c) {
  return (c >= 0xFE00 && c <= 0xFE0F) || (c >= 0x1F3FB && c <= 0x1F3FF) ||
         (c >= 0xE0020 && c <= 0xE007F) || c == 0x20E3;
}

// The code point at text[*i] (advancing *i past it), or -1 (past one byte) where the bytes are not
// UTF-8.
UChar32 next_character(std::string_view text, std::size_t* i) {
  auto at = static_cast<int32_t>(*i);
  UChar32 c = 0;
  U8_NEXT(reinterpret_cast<const uint8_t*>(text.data()), at, static_cast<int32_t>(text.size()), c);
  *i = static_cast<std::size_t>(at);
  return c;
}

bool regional_indicator(UChar32 c) { return c >= 0x1F1E6 && c <= 0x1F1FF; }

// Symbol spans of `text` outside the spans already found (`covered` marks their bytes).
std::vector<ProtectedSpan> symbol_spans(std::string_view text, const std::vector<bool>& covered) {
  std::vector<ProtectedSpan> symbols;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t begin = i;
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    const UChar32 c = next_character(text, &i);
    if (c < 0 || covered[begin] || !opens_symbol(static_cast<char32_t>(c))) continue;
    std::size_t end = i;
    bool flag_open = regional_indicator(c);
    while (end < text.size()) {
      std::size_t next = end;
      const UChar32 more = next_character(text, &next);
      if (more < 0) break;
      if (continues_symbol(static_cast<char32_t>(more))) {
        end = next;
      } else if (more == 0x200D && next < text.size()) {  // ZWJ: joins the next pictograph
        std::size_t after = next;
        const UChar32 joined = next_character(text, &after);
        if (joined < 0 || !opens_symbol(static_cast<char32_t>(joined))) break;
        end = after;
      } else if (flag_open && regional_indicator(more)) {  // two regional indicators: a flag
        end = next;
        flag_open = false;
      } else {
        break;
      }
    }
    symbols.push_back({begin, end, SpanKind::kSymbol, -1});
    i = end;
  }
  return symbols;
}

// One flag per byte of `text`: whether one of `spans` holds it.
std::vector<bool> covered_by(const std::vector<ProtectedSpan>& spans, std::string_view text) {
  std::vector<bool> covered(text.size(), false);
  for (const ProtectedSpan& span : spans) {
    std::fill(covered.begin() + static_cast<long>(span.begin),
              covered.begin() + static_cast<long>(span.end), true);
  }
  return covered;
}

// The spans found word by word, before the scan for markers: web and mail addresses (kUrl) and
// command-line options (kCode), in text order; where both claim a word the earlier start wins
// ("--url=https://example.com" is one option).
std::vector<ProtectedSpan> word_spans(std::string_view text) {
  std::vector<ProtectedSpan> words;
  for (const auto& [first, second] : spans::find_addresses(text)) {
    words.push_back({first, second, SpanKind::kUrl, -1});
  }
  if (text.find('-') == std::string_view::npos) return words;
  for (const auto& [first, second] : spans::find_command_options(text)) {
    words.push_back({first, second, SpanKind::kCode, -1});
  }
  std::stable_sort(words.begin(), words.end(), [](const ProtectedSpan& a, const ProtectedSpan& b) {
    return a.begin < b.begin;
  });
  std::vector<ProtectedSpan> apart;
  for (const ProtectedSpan& word : words) {
    if (apart.empty() || word.begin >= apart.back().end) apart.push_back(word);
  }
  return apart;
}

}  // namespace

std::vector<ProtectedSpan> find_protected_spans(std::string_view text,
                                                const SpanRecognitionOptions& options) {
  const spans::TextFacts facts(text);
  const std::vector<ProtectedSpan> words = word_spans(text);
  auto word = words.begin();
  const std::vector<spans::MarkdownPair> markdown = spans::find_markdown_pairs(text);
  // Their delimiters in text order.
  struct Delimiter {
    std::size_t begin, end;
    int pair;  // index into markdown; -1: a whole span (MarkdownPair::whole)
    bool closing;
  };
  std::vector<Delimiter> delimiters;
  for (std::size_t k = 0; k < markdown.size(); ++k) {
    if (markdown[k].whole) {  // one span, as a placeholder is: "[FAQ][]"
      delimiters.push_back({markdown[k].open_begin, markdown[k].close_end, -1, false});
      continue;
    }
    delimiters.push_back(
        {markdown[k].open_begin, markdown[k].open_end, static_cast<int>(k), false});
    delimiters.push_back(
        {markdown[k].close_begin, markdown[k].close_end, static_cast<int>(k), true});
  }
  std::sort(delimiters.begin(), delimiters.end(),
            [](const Delimiter& a, const Delimiter& b) { return a.begin < b.begin; });
  auto delimiter = delimiters.begin();
  std::vector<Candidate> candidates;
  constexpr std::string_view kStarts = "%{$&\\<`+#0123456789";
  std::size_t next = text.find_first_of(kStarts);  // kept while ahead: linear among markers
  for (std::size_t i = 0; i < text.size();) {
    if (next != std::string_view::npos && next < i) next = text.find_first_of(kStarts, i);
    while (word != words.end() && word->begin < i) ++word;  // inside a span
    while (delimiter != delimiters.end() && delimiter->begin < i) ++delimiter;
    // Leftmost wins (npos: none); an address or option before a recognizer's start.
    const std::size_t word_at = word != words.end() ? word->begin : std::string_view::npos;
    const std::size_t marker_at =
        delimiter != delimiters.end() ? delimiter->begin : std::string_view::npos;
    if (word_at != std::string_view::npos && word_at <= next && word_at <= marker_at) {
      Candidate found;
      found.span = *word;
      candidates.push_back(found);
      i = word->end;
      continue;
    }
    if (marker_at < next) {
      Candidate marker;
      marker.span = {delimiter->begin, delimiter->end, SpanKind::kTag, -1, delimiter->closing};
      if (delimiter->pair < 0) marker.span.kind = SpanKind::kCode;  // a whole reference link
      marker.markdown = delimiter->pair;
      candidates.push_back(marker);
      i = delimiter->end;
      continue;
    }
    if (next == std::string_view::npos) break;
    Candidate candidate = scan_at(facts, next);
    if (candidate.span.end > next) {
      i = candidate.span.end;
      candidates.push_back(candidate);
    } else {
      i = next + 1;
    }
  }
  pair_tags(candidates);
  pair_markdown(candidates, markdown.size());

  std::vector<int> new_index(candidates.size(), -1);
  std::vector<ProtectedSpan> result;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (!keep(candidates[i])) continue;
    new_index[i] = static_cast<int>(result.size());
    result.push_back(candidates[i].span);
  }
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (new_index[i] >= 0 && candidates[i].partner >= 0) {
      result[new_index[i]].partner = new_index[candidates[i].partner];
    }
  }

  if (text.find_first_of("()[]{}") != std::string_view::npos) {
    std::vector<ProtectedSpan> lone;
    for (const auto& [first, second] :
         spans::find_lone_bracket_words(text, covered_by(result, text))) {
      lone.push_back({first, second, SpanKind::kLoneBracket, -1});
    }
    merge_spans(result, lone);
  }

  if (std::any_of(text.begin(), text.end(),
                  [](char c) { return static_cast<unsigned char>(c) >= 0xC2; })) {
    merge_spans(result, symbol_spans(text, covered_by(result, text)));
  }

  if (options.accelerators && text.find_first_of("&_") != std::string_view::npos) {
    std::vector<Cover> covered(text.size(), kFree);
    for (const ProtectedSpan& span : result) {
      std::fill(covered.begin() + span.begin, covered.begin() + span.end,
                span.kind == SpanKind::kTag ? kByTag : kByOther);
    }
    const std::size_t marker = accelerator_marker(text, covered);
    if (marker != std::string_view::npos) {
      const auto at = std::lower_bound(
          result.begin(), result.end(), marker,
          [](const ProtectedSpan& span, std::size_t offset) { return span.begin < offset; });
      const int inserted = static_cast<int>(at - result.begin());
      result.insert(at, {marker, marker + 1, SpanKind::kAccelerator, -1});
      for (ProtectedSpan& span : result) {
        if (span.partner >= inserted) ++span.partner;
      }
    }
  }
  return result;
}

std::vector<ProtectedSpan> find_argument_spans(std::string_view text,
                                               const SpanRecognitionOptions& options) {
  std::vector<ProtectedSpan> found;
  for (ProtectedSpan span : find_protected_spans(text, options)) {
    span.partner = -1;
    const std::string_view head = text.substr(span.begin, 2);
    if (span.kind != SpanKind::kTag || (head != "](" && head != "][")) {
      found.push_back(span);
      continue;
    }
    // Between "](" (or "][") and the closing bracket.
    const std::size_t inside = span.begin + 2;
    for (ProtectedSpan inner :
         find_protected_spans(text.substr(inside, span.end - 1 - inside), options)) {
      inner.begin += inside;
      inner.end += inside;
      inner.partner = -1;
      found.push_back(inner);
    }
  }
  return found;
}

void merge_spans(std::vector<ProtectedSpan>& spans, const std::vector<ProtectedSpan>& added) {
  if (added.empty()) return;
  std::vector<ProtectedSpan> merged;
  merged.reserve(spans.size() + added.size());
  std::vector<int> moved(spans.size());
  std::size_t next_added = 0;
  for (std::size_t k = 0; k < spans.size(); ++k) {
    while (next_added < added.size() && added[next_added].begin < spans[k].begin) {
      merged.push_back(added[next_added++]);
    }
    moved[k] = static_cast<int>(merged.size());
    merged.push_back(spans[k]);
  }
  merged.insert(merged.end(), added.begin() + static_cast<long>(next_added), added.end());
  for (ProtectedSpan& span : merged) {
    if (span.partner >= 0) span.partner = moved[static_cast<std::size_t>(span.partner)];
  }
  spans = std::move(merged);
}

const char* span_kind_name(SpanKind kind) {
  switch (kind) {
    case SpanKind::kPrintf:
      return "printf";
    case SpanKind::kPercent:
      return "percent";
    case SpanKind::kPositional:
      return "positional";
    case SpanKind::kBrace:
      return "brace";
    case SpanKind::kIcuMessage:
      return "icu_message";
    case SpanKind::kVariable:
      return "variable";
    case SpanKind::kTag:
      return "tag";
    case SpanKind::kEntity:
      return "entity";
    case SpanKind::kEscape:
      return "escape";
    case SpanKind::kAccelerator:
      return "accelerator";
    case SpanKind::kSymbol:
      return "symbol";
    case SpanKind::kUrl:
      return "url";
    case SpanKind::kCode:
      return "code";
    case SpanKind::kNumber:
      return "number";
    case SpanKind::kPluralNumber:
      return "plural_number";
    case SpanKind::kLoneBracket:
      return "lone_bracket";
  }
  return "unknown";
}

}  // namespace rpt
