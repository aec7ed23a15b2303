#include "documents/segmenter.h"

#include <unicode/brkiter.h>
#include <unicode/filteredbrk.h>
#include <unicode/locid.h>
#include <unicode/uchar.h>
#include <unicode/utf8.h>
#include <unicode/utext.h>

#include <cctype>
#include <map>
#include <memory>
#include <span>
#include <stdexcept>

#include "common/text_hygiene.h"
#include "documents/bracket_pairs.h"
#include "documents/markdown_blocks.h"
#include "documents/icu_message.h"
#include "documents/option_column.h"
#include "documents/unbreakable.h"
#include "spans/protected_spans.h"

namespace rpt::documents {
namespace {

struct Range {
  std::size_t begin = 0;
  std::size_t end = 0;
};

// The length of the line break at text[i] (\n, \r, \r\n, NEL, LS, PS), or 0.
std::size_t line_break_length(std::string_view text, std::size_t i) {
  const std::string_view rest = text.substr(i);
  if (rest.starts_with("\r\n")) return 2;
  if (rest[0] == '\n' || rest[0] == '\r' || rest[0] == '\f' || rest[0] == '\v') return 1;
  if (rest.starts_with("\xC2\x85")) return 2;
  if (rest.starts_with("\xE2\x80\xA8") || rest.starts_with("\xE2\x80\xA9")) return 3;
  return 0;
}

bool has_letter_or_digit(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    char32_t c = 0;
    if (!next_code_point(text, &i, &c)) {
      ++i;  // a byte that is not UTF-8: no letter, and the rest may have one
      continue;
    }
    if (u_isalnum(static_cast<UChar32>(c))) return true;
  }
  return false;
}

bool has_letter(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    char32_t c = 0;
    if (!next_code_point(text, &i, &c)) {
      ++i;
      continue;
    }
    if (u_isalpha(static_cast<UChar32>(c))) return true;
  }
  return false;
}

bool is_ascii_digit(char c) { return c >= '0' && c <= '9'; }

// The character that the reference at word[*i] stands for ("&lt;", "&gt;", "&#187;", "&#xBB;"),
// *i moved past it; false (nothing moved) when none starts there. Markup units write '<' and '>'
// of their text so: a page's navigation arrows ("&lt;&lt; Previous") are symbols too.
bool next_character_reference(std::string_view word, std::size_t* i, char32_t* c) {
  const std::string_view rest = word.substr(*i);
  const std::size_t end = rest.find(';');
  if (!rest.starts_with('&') || end == std::string_view::npos || end > 10) return false;
  const std::string_view name = rest.substr(1, end - 1);
  if (name == "lt" || name == "gt") {
    *c = name == "lt" ? '<' : '>';
  } else if (name.size() > 1 && name[0] == '#') {
    const bool hex = name[1] == 'x' || name[1] == 'X';
    const std::string_view digits = name.substr(hex ? 2 : 1);
    char32_t value = 0;
    for (const char digit : digits) {
      const int d = std::isdigit(static_cast<unsigned char>(digit)) ? digit - '0'
                    : hex && std::isxdigit(static_cast<unsigned char>(digit))
                        ? std::tolower(static_cast<unsigned char>(digit)) - 'a' + 10
                        : -1;
      if (d < 0) return false;
      value = value * (hex ? 16 : 10) + static_cast<char32_t>(d);
    }
    if (digits.empty() || value > 0x10FFFF) return false;
    *c = value;
  } else {
    return false;
  }
  *i += end + 1;
  return true;
}

// Symbols (Unicode S*: ✓ © → €, emoji), dashes and bullets, and nothing else: decoration a
// model would swap for another.
bool only_symbols(std::string_view word) {
  if (word.empty()) return false;
  for (std::size_t i = 0; i < word.size();) {
    char32_t c = 0;
    if (!next_character_reference(word, &i, &c) && !next_code_point(word, &i, &c)) return false;
    const auto mask = U_GET_GC_MASK(static_cast<UChar32>(c));
    const bool bullet = c == '*' || c == 0x2022 || c == 0x00B7 || c == 0x2023 || c == 0x25E6;
    // Joiners and variation selectors hold emoji sequences together.
    const bool joiner = c == 0x200D || (c >= 0xFE00 && c <= 0xFE0F);
    if ((mask & (U_GC_S_MASK | U_GC_PD_MASK)) == 0 && !bullet && !joiner) return false;
  }
  return true;
}

// The start of the first blank code point in [begin, end), or end.
std::size_t next_blank(std::string_view text, std::size_t begin, std::size_t end) {
  for (std::size_t i = begin; i < end;) {
    const std::size_t at = i;
    char32_t c = 0;
    if (!next_code_point(text.substr(0, end), &i, &c)) {
      i = at + 1;
    } else if (is_blank_code_point(c)) {
      return at;
    }
  }
  return end;
}

// Where the blank run that ends at `end` starts (not before `begin`): backwards, so trimming
// word after word from a text's end stays linear.
std::size_t blank_start(std::string_view text, std::size_t begin, std::size_t end) {
  std::size_t i = end;
  while (i > begin) {
    char32_t c = 0;
    const std::size_t start = previous_code_point(text, i, &c);
    if (c == 0 || !is_blank_code_point(c)) break;
    i = start;
  }
  return i;
}

// The end of the last blank run in [begin, end) (where the last word starts), or begin.
std::size_t previous_blank_end(std::string_view text, std::size_t begin, std::size_t end) {
  for (std::size_t i = end; i > begin;) {
    char32_t c = 0;
    const std::size_t start = previous_code_point(text, i, &c);
    if (c != 0 && is_blank_code_point(c)) return i;
    i = start;
  }
  return begin;
}

// A section number opening a heading, without the blanks after it: "2.1 The Basics", "1.2.3.
// Scope": two or more numbers joined by full stops (a last one allowed) before blank and a
// capital. Read by the models, it made them stop after it ("2.1 The Basics" came back as "2.1");
// a number of the sentence ("2.5 times faster", "2024 Annual Report") is none. 0 when none.
std::size_t section_number_length(std::string_view line) {
  std::size_t i = 0;
  int numbers = 0;
  while (true) {
    const std::size_t start = i;
    while (i < line.size() && i - start < 3 && is_ascii_digit(line[i])) ++i;
    if (i == start) return 0;
    ++numbers;
    if (i + 1 >= line.size() || line[i] != '.' || !is_ascii_digit(line[i + 1])) break;
    ++i;
  }
  if (numbers < 2) return 0;
  if (i < line.size() && line[i] == '.') ++i;
  const std::size_t after = skip_blank(line, i, line.size());  // a no-break space too
  if (after == i || after == line.size()) return 0;
  UChar32 next = 0;
  const auto length = static_cast<std::int32_t>(line.size());
  auto at = static_cast<std::int32_t>(after);
  U8_NEXT(line.data(), at, length, next);
  return next >= 0 && u_isupper(next) ? i : 0;
}

// The list marker opening a line's content, with the blanks after it: "- ", "* ", "• ", "1. ",
// "12) ", "(a) ", "a) ", "## ", "> ", a section number ("2.1 "). 0 when there is none (a marker
// needs blank after it, and something after that).
std::size_t list_marker_length(std::string_view text, std::size_t begin, std::size_t end,
                               bool headings) {
  const std::string_view line = text.substr(begin, end - begin);
  std::size_t marker = 0;
  static constexpr std::string_view kBullets[] = {"-",
                                                  "*",
                                                  "+",
                                                  ">",
                                                  "\xE2\x80\xA2" /* • */,
                                                  "\xE2\x97\xA6" /* ◦ */,
                                                  "\xE2\x96\xAA" /* ▪ */,
                                                  "\xE2\x80\xA3" /* ‣ */,
                                                  "\xC2\xB7" /* · */,
                                                  "\xE2\x80\x93" /* – */,
                                                  "\xE2\x80\x94" /* — */};
  for (std::string_view bullet : kBullets) {
    if (line.starts_with(bullet)) {
      marker = bullet.size();
      break;
    }
  }
  if (marker == 0 && headings && !line.empty() && line[0] == '#') {
    while (marker < line.size() && marker < 6 && line[marker] == '#') ++marker;
  }
  if (marker == 0) marker = section_number_length(line);
  if (marker == 0) {  // 1. 12) (3) a) (b)
    std::size_t i = line.starts_with("(") ? 1 : 0;
    const std::size_t first = i;
    while (i < line.size() && i - first < 3 && is_ascii_digit(line[i])) ++i;
    if (i == first && i < line.size() && line[i] >= 'a' && line[i] <= 'z') ++i;
    if (i > first && i < line.size()) {
      if (first == 1 && line[i] == ')') {
        marker = i + 1;
      } else if (first == 0 && (line[i] == ')' || (line[i] == '.' && is_ascii_digit(line[0])))) {
        marker = i + 1;
      }
    }
  }
  if (marker == 0) return 0;
  const std::size_t after = skip_blank(text, begin + marker, end);
  if (after == begin + marker || after == end) return 0;
  return after - begin;
}

// Abbreviations after which a full stop ends no sentence. ICU's own lists are not used: they
// suppress a break after any upper-case word ("Press OK. Then", "Export as PDF. Then" stay one
// sentence: ICU matches a listed initial at the end of a longer word), and so would a short
// entry here: none is a common word's ending ("min." would hold "admin. Then"). Nor is any an
// abbreviation written after a name (Inc., Ltd., Corp., Jr.): "works at ACME Inc. He is the
// CEO." ends a sentence there far more often than not (before a lower-case word ICU breaks
// nowhere anyway), and the model, given both sentences as one, dropped the second.
constexpr const char* kAbbreviations[] = {
    "Mr.",  "Mrs.", "Ms.",   "Dr.",   "Prof.", "Sr.",   "approx.", "e.g.",  "i.e.",  "vs.",
    "cf.",  "Fig.", "Figs.", "No.",   "Nos.",  "Vol.",  "Ref.",    "incl.", "excl.", "Jan.",
    "Feb.", "Aug.", "Sept.", "Oct.",  "Nov.",  "Dec.",  "z.B.",    "d.h.",  "bzw.",  "Nr.",
    "vgl.", "usw.", "ggf.",  "evtl.", "inkl.", "p.ex.", "Mme.",    "Mlle."};

// Whether `text` ends with one of kAbbreviations as a word of its own.
bool ends_with_abbreviation(std::string_view text) {
  for (const std::string_view abbreviation : kAbbreviations) {
    if (!text.ends_with(abbreviation)) continue;
    const std::size_t at = text.size() - abbreviation.size();
    if (at == 0 || !std::isalnum(static_cast<unsigned char>(text[at - 1]))) return true;
  }
  return false;
}

// This thread's sentence break iterator for `language`, with kAbbreviations; null when ICU has
// no data to make one.
icu::BreakIterator* sentence_iterator(const std::string& language) {
  thread_local std::map<std::string, std::unique_ptr<icu::BreakIterator>> iterators;
  auto found = iterators.find(language);
  if (found != iterators.end()) return found->second.get();
  if (iterators.size() > 64) iterators.clear();  // languages come from model configs: few
  UErrorCode status = U_ZERO_ERROR;
  const icu::Locale locale(language.c_str());
  std::unique_ptr<icu::BreakIterator> iterator(
      icu::BreakIterator::createSentenceInstance(locale, status));
  std::unique_ptr<icu::FilteredBreakIteratorBuilder> filter(
      icu::FilteredBreakIteratorBuilder::createEmptyInstance(status));
  if (U_SUCCESS(status)) {
    for (const char* abbreviation : kAbbreviations) {
      filter->suppressBreakAfter(icu::UnicodeString::fromUTF8(abbreviation), status);
    }
    iterator.reset(filter->wrapIteratorWithFilter(iterator.release(), status));
  }
  // Without ICU's data (a stripped install) there is no iterator: lines are not cut further.
  if (U_FAILURE(status)) iterator.reset();
  return iterators.emplace(language, std::move(iterator)).first->second.get();
}

// A sentence may end at `at`: after blank (ICU puts a sentence's trailing spaces in it), or
// after a terminal mark of a script written without spaces (。！？ ।). Not inside a word:
// "example.com/a?b=c", "config.txt.bak", "v1.2.3" end no sentence.
bool ends_word(std::string_view text, std::size_t at) {
  char32_t before = 0;
  if (at > 0) previous_code_point(text, at, &before);
  if (is_blank_code_point(before)) return true;
  return before > 0x7F && u_hasBinaryProperty(static_cast<UChar32>(before), UCHAR_S_TERM);
}

// Which of a text's tag pairs are layout whole at a segment's edge: a Markdown image ("![" of
// ![alt](src)), or a pair around nothing but images and tags (a badge, [![CI](b.svg)](ci),
// <a><img src="b.svg"/></a>). Not one around a placeholder: "<b>%s</b> files" is one sentence.
// Answered in constant time from counts made once: a nest of a million tags is peeled pair by
// pair.
class LayoutPairs {
 public:
  LayoutPairs(std::string_view content, const std::vector<ProtectedSpan>& spans)
      : content_(content), spans_(spans), wordy_(2 * spans.size() + 2, 0) {
    // Item 2k: the text before spans[k] (k == size: after the last); item 2k + 1: spans[k]. An
    // image's insides (its alt text) count for nothing.
    std::size_t from = 0;
    for (std::size_t k = 0; k <= spans.size(); ++k) {
      const std::size_t to = k < spans.size() ? spans[k].begin : content.size();
      int bad = has_letter_or_digit(content.substr(from, to - from)) ? 1 : 0;
      wordy_[2 * k + 1] = wordy_[2 * k] + bad;
      if (k == spans.size()) break;
      bad = spans[k].kind != SpanKind::kTag ? 1 : 0;
      wordy_[2 * k + 2] = wordy_[2 * k + 1] + bad;
      from = spans[k].end;
      if (opens_image(k)) {
        const auto closer = static_cast<std::size_t>(spans[k].partner);
        for (std::size_t inside = 2 * k + 3; inside <= 2 * closer + 2; ++inside) {
          wordy_[inside] = wordy_[2 * k + 2];
        }
        from = spans[closer].end;
        k = closer;
      }
    }
  }

  // Whether spans[i] opens such a pair.
  bool opens(std::size_t i) const {
    if (spans_[i].kind != SpanKind::kTag || spans_[i].partner <= static_cast<int>(i)) return false;
    if (opens_image(i)) return true;
    const auto closer = static_cast<std::size_t>(spans_[i].partner);
    // Items 2i + 2 (the text after spans[i]) to 2 * closer (the text before its partner).
    return wordy_[2 * closer + 1] == wordy_[2 * i + 2];
  }

 private:
  bool opens_image(std::size_t k) const {
    return spans_[k].kind == SpanKind::kTag && spans_[k].partner > static_cast<int>(k) &&
           content_.substr(spans_[k].begin, 2) == "![";
  }

  std::string_view content_;
  const std::vector<ProtectedSpan>& spans_;
  std::vector<int> wordy_;  // wordy_[j]: how many of items [0, j) have words or are no tags
};

// Markup a model need not see at the edges of text[first, last) (no blank edges), moved out
// with the blanks beside it: a tag standing alone (<br/>, <img src="a"/>, a markup placeholder
// <x id="1"/>, a tag whose partner is elsewhere), a Markdown image or a pair around no words at
// either end, and a tag pair (Markdown emphasis, a link) around all of it. A tag pair that encloses
// only part of the text stays: its words need it. The demo models stopped after an image they read
// at a sentence's start: "![logo](img.png) Welcome to the app." came back as "![logo](img.png)".
Range without_edge_markup(std::string_view text, std::size_t first, std::size_t last) {
  const std::string_view content = text.substr(first, last - first);
  const std::vector<ProtectedSpan> spans = find_protected_spans(content);
  const LayoutPairs layout_pairs(content, spans);
  std::size_t begin = 0;
  std::size_t end = content.size();
  std::size_t front = 0;            // spans[front] is the first that may open the rest
  std::size_t back = spans.size();  // spans[back - 1] the last that may close it
  while (front < back && begin < end) {
    const ProtectedSpan& opening = spans[front];
    const ProtectedSpan& closing = spans[back - 1];
    const auto closing_opener = static_cast<std::size_t>(closing.partner);
    if (opening.begin == begin && opening.partner < static_cast<int>(back) &&
        layout_pairs.opens(front)) {
      begin = skip_blank(content, spans[static_cast<std::size_t>(opening.partner)].end, end);
      front = static_cast<std::size_t>(opening.partner) + 1;
    } else if (closing.end == end && closing.partner >= static_cast<int>(front) &&
               layout_pairs.opens(closing_opener)) {
      end = blank_start(content, begin, spans[closing_opener].begin);
      back = closing_opener;
    } else if (opening.kind == SpanKind::kTag && opening.begin == begin && opening.partner < 0) {
      begin = skip_blank(content, opening.end, end);
      ++front;
    } else if (closing.kind == SpanKind::kTag && closing.end == end && closing.partner < 0) {
      end = blank_start(content, begin, closing.begin);
      --back;
    } else if (opening.kind == SpanKind::kTag && opening.begin == begin &&
               opening.partner == static_cast<int>(back - 1) && closing.end == end &&
               front + 1 < back) {
      begin = skip_blank(content, opening.end, end);
      end = blank_start(content, begin, closing.begin);
      ++front;
      --back;
    } else {
      break;
    }
  }
  return {first + begin, first + end};
}

// Quotation marks and brackets, opening and closing, that may stand around a segment.
constexpr std::string_view kQuotes[][2] = {
    {"\"", "\""},         {"'", "'"},           {"\u201C", "\u201D"}, {"\u201E", "\u201C"},
    {"\u201E", "\u201D"}, {"\u2018", "\u2019"}, {"\u201A", "\u2018"}, {"\u00AB", "\u00BB"},
    {"\u00BB", "\u00AB"}, {"\u2039", "\u203A"}, {"\u300C", "\u300D"}, {"\u300E", "\u300F"}};
constexpr std::string_view kBrackets[][2] = {{"(", ")"},           {"[", "]"},
                                             {"\uFF08", "\uFF09"}, {"\uFF3B", "\uFF3D"},
                                             {"\u3010", "\u3011"}, {"\u3014", "\u3015"}};

// The inside of the quotation marks or brackets around all of text[first, last) ("Then save
// it.", (Open the file.), «Ouvrir»), or nothing (begin == end == 0) when there are none or the
// marks recur inside ("Open" or "Save", 'Don't'): the demo models, trained on bare UI strings,
// garbled or dropped a quoted sentence ("Open the file." came back as "OpenDatei.").
Range inside_marks(std::string_view text, std::size_t first, std::size_t last) {
  const std::string_view content = text.substr(first, last - first);
  using Marks = std::span<const std::string_view[2]>;
  for (const Marks marks : {Marks(kQuotes), Marks(kBrackets)}) {
    for (const auto& [open, close] : marks) {
      if (content.size() <= open.size() + close.size() || !content.starts_with(open) ||
          !content.ends_with(close)) {
        continue;
      }
      const std::string_view inside =
          content.substr(open.size(), content.size() - open.size() - close.size());
      if (inside.find(open) == std::string_view::npos &&
          inside.find(close) == std::string_view::npos) {
        return {first + open.size(), last - close.size()};
      }
    }
  }
  return {};
}

// Whether `inside` is one tag pair around words and nothing else: "<a href=\"i.html\">Index</a>".
bool is_one_tag_pair(std::string_view inside) {
  const std::vector<ProtectedSpan> spans = find_protected_spans(inside);
  return spans.size() >= 2 && spans.front().kind == SpanKind::kTag && spans.front().begin == 0 &&
         spans.front().partner == static_cast<int>(spans.size() - 1) &&
         spans.back().end == inside.size() && has_words(inside);
}

// Where text[first, last) (no blank edges) is cut in two when it starts or ends with a reference:
// brackets around one tag pair, set off by blank from words of its own ("See also
// [<a href=\"i.html\">Index</a>]", "(<b>Beta</b>) Open the file"). The cut is the start of that
// blank; 0 when there is none. The reference is a segment of its own, its brackets and tags layout
// (inside_marks, without_edge_markup) like the blank between: read in the sentence, the demo models
// doubled or dropped its closing bracket, and the blank (a no-break space) came back as theirs.
// Not quotation marks: a quoted link is what the sentence speaks of ("Click \"<b>Save</b>\"").
std::size_t reference_cut(std::string_view text, std::size_t first, std::size_t last) {
  const std::string_view content = text.substr(first, last - first);
  for (const auto& [open, close] : kBrackets) {
    if (content.size() <= open.size() + close.size()) continue;
    if (content.ends_with(close)) {
      const std::size_t inside_end = content.size() - close.size();
      const std::size_t at = content.rfind(open, inside_end - 1);
      const std::size_t cut = at == std::string_view::npos ? 0 : blank_start(content, 0, at);
      if (cut > 0 && cut < at &&
          is_one_tag_pair(content.substr(at + open.size(), inside_end - at - open.size())) &&
          has_words(content.substr(0, cut))) {
        return first + cut;
      }
    }
    if (content.starts_with(open)) {
      const std::size_t inside_end = content.find(close, open.size());
      if (inside_end != std::string_view::npos && inside_end > open.size() &&
          is_one_tag_pair(content.substr(open.size(), inside_end - open.size()))) {
        const std::size_t cut = inside_end + close.size();
        const std::size_t rest = skip_blank(content, cut, content.size());
        if (rest > cut && rest < content.size() && has_words(content.substr(rest))) {
          return first + cut;
        }
      }
    }
  }
  return 0;
}

// Builds a SegmentedText from left to right: layout accumulates until the next segment.
class Builder {
 public:
  // `sentences`: the text is cut into sentences, a reference at a sentence's edge is a segment of
  // its own (reference_cut) and a number after markup at its start layout; false where each text
  // is one segment (SplitSentences::kNone).
  Builder(std::string_view text, bool edge_markup_is_layout, bool sentences)
      : text_(text), edge_markup_is_layout_(edge_markup_is_layout), sentences_(sentences) {}

  void layout(std::size_t begin, std::size_t end) {
    pending_.append(text_.substr(begin, end - begin));
  }

  // [begin, end) has no blank edge: a segment if it has words, else layout; markup at its edges
  // is layout (without_edge_markup).
  void segment(std::size_t begin, std::size_t end) {
    const Range content = content_of(begin, end);
    const std::string_view segment = text_.substr(content.begin, content.end - content.begin);
    if (!has_words(segment)) {
      layout(begin, end);
      return;
    }
    layout(begin, content.begin);
    result_.separators.push_back(std::move(pending_));
    pending_.clear();
    result_.segments.emplace_back(segment);
    layout(content.end, end);
  }

  // Content with possibly blank edges: the edges are layout, and so are markup standing at
  // either end (without_edge_markup), words of symbols alone at either end ("✓ Done",
  // "Saved 😀"): a model would swap them for others, and quotation marks or brackets around
  // all of it (inside_marks).
  void trimmed_segment(std::size_t begin, std::size_t end) {
    std::size_t first = skip_blank(text_, begin, end);
    std::size_t last = trim_blank_end(text_, first, end);
    const Range content = content_of(first, last);
    // A list marker or section number after markup at the start is layout as at a line's start
    // (split_block): "<a name=\"intro\"/>1. Introduction", "<a href=\"c.html\">2. Using</a>".
    if (content.begin > first && sentences_) {
      first = content.begin + list_marker_length(text_, content.begin, content.end, false);
    } else {
      first = content.begin;
    }
    last = content.end;
    while (true) {
      const std::size_t word_end = next_blank(text_, first, last);
      if (word_end == last || !only_symbols(text_.substr(first, word_end - first))) break;
      first = skip_blank(text_, word_end, last);
    }
    while (true) {
      const std::size_t word_begin = previous_blank_end(text_, first, last);
      if (word_begin == first || !only_symbols(text_.substr(word_begin, last - word_begin))) break;
      last = blank_start(text_, first, word_begin);
    }
    if (const std::size_t cut =
            sentences_ && edge_markup_is_layout_ ? reference_cut(text_, first, last) : 0;
        cut != 0) {
      trimmed_segment(begin, cut);
      trimmed_segment(cut, end);
      return;
    }
    for (Range inside = inside_marks(text_, first, last); inside.end != 0;
         inside = inside_marks(text_, first, last)) {
      first = skip_blank(text_, inside.begin, inside.end);
      last = trim_blank_end(text_, first, inside.end);
    }
    layout(begin, first);
    if (first < last) segment(first, last);
    layout(last, end);
  }

  SegmentedText finish() {
    result_.separators.push_back(std::move(pending_));
    return std::move(result_);
  }

 private:
  // text_[begin, end) without the markup at its edges, where that is layout.
  Range content_of(std::size_t begin, std::size_t end) const {
    return edge_markup_is_layout_ ? without_edge_markup(text_, begin, end) : Range{begin, end};
  }

  std::string_view text_;
  bool edge_markup_is_layout_;
  bool sentences_;
  std::string pending_;
  SegmentedText result_;
};

// The bracket and quotation mark pairs of a paragraph that stand where sentences stand: after
// its start or a sentence's end, around text that ends a sentence, before blank and no
// lower-case word, or its end ("(See the manual. It explains them.) Then start."). Their brackets
// are layout and the sentences inside are cut as outside; kept whole, a pair of two sentences lost
// one to the model ("(Suchen Sie die manuelle Optionen.)"). Offsets are the paragraph's.
class LayoutBrackets {
 public:
  explicit LayoutBrackets(std::string_view content)
      : content_(content), inside_(content.size() + 1, 0), closing_(content.size() + 1, 0) {}

  // Whether the pair [opening, after_closing) stands alone; if so its brackets are layout.
  bool take_if_standing_alone(std::size_t opening, std::size_t after_closing) {
    std::size_t inside = opening;
    char32_t c = 0;
    if (!next_code_point(content_, &inside, &c)) return false;
    const std::size_t closing = previous_code_point(content_, after_closing, &c);
    const std::size_t before = blank_start(content_, 0, opening);
    const std::size_t next_word = skip_blank(content_, after_closing, content_.size());
    if ((before > 0 && !ends_sentence(before)) ||
        !ends_sentence(trim_blank_end(content_, inside, closing)) ||
        (after_closing < content_.size() &&
         (next_word == after_closing || starts_lower_case(next_word)))) {
      return false;
    }
    inside_[opening] = inside;
    closing_[after_closing] = closing;
    return true;
  }
  // Where the inside of a standing-alone pair opening at `at` starts, or 0.
  std::size_t inside_opening(std::size_t at) const { return inside_[at]; }
  // Where the closing bracket of a standing-alone pair ending at `at` starts, or 0.
  std::size_t closing_before(std::size_t at) const { return closing_[at]; }

 private:
  // A lower-case letter starts text[at]: the pair's sentence goes on after it ('"Open it. Then
  // save it." he said.').
  bool starts_lower_case(std::size_t at) const {
    std::size_t i = at;
    char32_t c = 0;
    return at < content_.size() && next_code_point(content_, &i, &c) &&
           u_islower(static_cast<UChar32>(c)) != 0;
  }
  // A sentence-terminal mark (. ! ? 。 ...) ends text[0, at).
  bool ends_sentence(std::size_t at) const {
    char32_t c = 0;
    if (at == 0) return false;
    previous_code_point(content_, at, &c);
    return c != 0 && u_hasBinaryProperty(static_cast<UChar32>(c), UCHAR_S_TERM);
  }

  std::string_view content_;
  std::vector<std::size_t> inside_;
  std::vector<std::size_t> closing_;
};

// The sentences of text[begin, end) (no blank edges). `line_breaks_as_spaces`: single line
// breaks inside do not end a sentence.
void split_sentences(std::string_view text, std::size_t begin, std::size_t end,
                     const SegmentationOptions& options, Builder& out) {
  const bool line_breaks_as_spaces = options.split == SplitSentences::kSentences;
  std::string content(text.substr(begin, end - begin));
  Unbreakable unbreakable(content);
  if (options.keep_together) {
    for (const auto& [first, last] : options.keep_together(content)) unbreakable.add(first, last);
  }
  if (line_breaks_as_spaces) {  // the same length: offsets stay those of the text
    for (std::size_t i = 0; i < content.size();) {
      const std::size_t length = line_break_length(content, i);
      if (length == 0) {
        ++i;
        continue;
      }
      content.replace(i, length, length, ' ');
      i += length;
    }
  }
  // ICU reads a span as a capitalised word ('X's, the same length): "file. <b>Save</b>" and
  // "Done. %d files" end a sentence before the span, where ICU would read the tag's name or the
  // word after the placeholder as lower case.
  // A tag right after a sentence's end ("file.<br/>Save", "done!<x id=\"1\"/>") reads to ICU as
  // a space and a word: the sentence may end before the tag.
  std::vector<bool> tag_after_end(content.size() + 1, false);
  std::string words = content;  // without its spans ('#'): where a piece has letters of its own
  for (const ProtectedSpan& span : find_protected_spans(content)) {
    words.replace(span.begin, span.end - span.begin, span.end - span.begin, '#');
    const std::string_view before = std::string_view(content).substr(0, span.begin);
    const bool after_end = span.kind == SpanKind::kTag && !before.empty() &&
                           std::string_view(".!?").find(before.back()) != std::string_view::npos &&
                           !ends_with_abbreviation(before);
    content.replace(span.begin, span.end - span.begin, span.end - span.begin, 'X');
    if (after_end) content[span.begin] = ' ';
    tag_after_end[span.begin] = after_end;
  }
  // A bracket or quotation pair closed in the paragraph holds its sentences in the one around it
  // (spans read as 'X' now: a mark inside a placeholder or address pairs with nothing). One that
  // stands where sentences stand ("Saved. (Open it later. It stays here.) Then quit.") holds
  // nothing: its brackets are layout and its sentences are cut as outside it.
  LayoutBrackets layout_brackets(content);
  for (const auto& [opening, after_closing] : bracket_pairs(content)) {
    if (!layout_brackets.take_if_standing_alone(opening, after_closing)) {
      unbreakable.add(opening, after_closing);
    }
  }
  // text[begin + from, begin + to) is a sentence, a standing-alone pair's brackets at its edges
  // layout.
  auto sentence = [&](std::size_t from, std::size_t to) {
    const std::size_t first = skip_blank(content, from, to);
    if (const std::size_t inside = layout_brackets.inside_opening(first); inside != 0) {
      out.layout(begin + from, begin + inside);
      from = inside;
    }
    const std::size_t closing = layout_brackets.closing_before(trim_blank_end(content, from, to));
    if (closing > from) {
      out.trimmed_segment(begin + from, begin + closing);
      out.layout(begin + closing, begin + to);
    } else {
      out.trimmed_segment(begin + from, begin + to);
    }
  };
  icu::BreakIterator* iterator = sentence_iterator(options.language);
  if (iterator == nullptr) {
    out.trimmed_segment(begin, end);
    return;
  }
  UErrorCode status = U_ZERO_ERROR;
  std::unique_ptr<UText, decltype(&utext_close)> utext(
      utext_openUTF8(nullptr, content.data(), static_cast<int64_t>(content.size()), &status),
      &utext_close);
  iterator->setText(utext.get(), status);
  if (U_FAILURE(status)) {
    out.trimmed_segment(begin, end);
    return;
  }
  std::size_t sentence_begin = 0;
  std::size_t scanned = 0;  // has_letter has seen [sentence_begin, scanned)
  bool letters = false;
  for (int32_t boundary = iterator->next(); boundary != icu::BreakIterator::DONE;
       boundary = iterator->next()) {
    auto at = static_cast<std::size_t>(boundary);
    const bool before_tag = at > 0 && tag_after_end[at - 1];
    if (before_tag) --at;  // ICU broke after the tag's first byte, read as a space
    if (at <= sentence_begin) continue;
    if (at < content.size() && (unbreakable(at) || (!before_tag && !ends_word(content, at)))) {
      continue;
    }
    // A piece without a letter outside its spans ("1.", "...", "<a name=\"intro\"/>1.") joins
    // the sentence after it: a number alone is a heading's or list item's, not a sentence.
    // Scanned once: each boundary looks only at what is new since the last one.
    letters = letters || has_letter(std::string_view(words).substr(scanned, at - scanned));
    scanned = at;
    if (at < content.size() && !letters) continue;
    letters = false;
    sentence(sentence_begin, at);
    sentence_begin = at;
  }
  if (sentence_begin < content.size()) sentence(sentence_begin, content.size());
}

// One line's or paragraph's content [begin, end): indentation, a list marker and a --help
// text's option column are layout.
void split_block(std::string_view text, std::size_t begin, std::size_t end,
                 const SegmentationOptions& options, bool headings, Builder& out) {
  std::size_t content = skip_blank(text, begin, end);
  const std::size_t marker = list_marker_length(text, content, end, headings);
  content += marker > 0 ? marker : option_column_length(text, content, end);
  const std::size_t content_end = trim_blank_end(text, content, end);
  out.layout(begin, content);
  if (content < content_end) {
    if (options.split == SplitSentences::kNewlines) {
      out.segment(content, content_end);
    } else {
      split_sentences(text, content, content_end, options, out);
    }
  }
  out.layout(content_end, end);
}

// The lines of text: [begin, end) without its line break.
std::vector<Range> lines_of(std::string_view text) {
  std::vector<Range> lines;
  std::size_t begin = 0;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = line_break_length(text, i);
    if (length == 0) {
      ++i;
      continue;
    }
    lines.push_back({begin, i});
    i += length;
    begin = i;
  }
  lines.push_back({begin, text.size()});
  return lines;
}

}  // namespace

namespace {

// segment_text for a text that is not one ICU message with cases.
// `headings`: a line's leading '#' marks a Markdown heading (layout); false in an ICU message's
// case, where it is the plural's number (the model wrote "# files" alone as "# Fichiers").
SegmentedText segment_lines(std::string_view text, const SegmentationOptions& options,
                            bool headings = true) {
  Builder out(text, options.edge_markup_is_layout, options.split != SplitSentences::kNone);
  if (options.split == SplitSentences::kNone) {
    out.trimmed_segment(0, text.size());
    SegmentedText whole = out.finish();
    whole.whole = true;
    return whole;
  }
  const std::vector<Range> lines = lines_of(text);
  std::vector<bool> blank(lines.size());
  for (std::size_t i = 0; i < lines.size(); ++i) {
    blank[i] = is_blank_text(text.substr(lines[i].begin, lines[i].end - lines[i].begin));
  }
  std::vector<std::pair<std::size_t, std::size_t>> line_ranges;
  for (const Range& line : lines) line_ranges.emplace_back(line.begin, line.end);
  const MarkdownLines markdown = markdown_lines(text, line_ranges, options.markdown);
  // A Markdown paragraph's line breaks are blanks: cut at its sentences only.
  SegmentationOptions in_paragraphs = options;
  if (options.markdown && options.split == SplitSentences::kAuto) {
    in_paragraphs.split = SplitSentences::kSentences;
  }
  // A block: one line, or with kSentences a paragraph (lines up to a blank one), or in a Markdown
  // document the lines of one paragraph (or heading, list item) as md4c reads it.
  for (std::size_t i = 0; i < lines.size();) {
    std::size_t last = i;
    if (markdown.layout[i]) {
      out.layout(lines[i].begin, lines[i].end);
    } else if (!markdown.cells[i].empty()) {  // a table row: cell by cell, the pipes layout
      std::size_t done = lines[i].begin;
      for (const auto& [cell_begin, cell_end] : markdown.cells[i]) {
        out.layout(done, cell_begin);
        split_block(text, cell_begin, cell_end, in_paragraphs, false, out);
        done = cell_end;
      }
      out.layout(done, lines[i].end);
    } else {
      if (options.markdown && options.split != SplitSentences::kNewlines) {
        while (last + 1 < lines.size() && markdown.joins_previous[last + 1]) ++last;
      } else if (options.split == SplitSentences::kSentences) {
        while (last + 1 < lines.size() && !blank[last + 1] && !markdown.layout[last + 1] &&
               !blank[i]) {
          ++last;
        }
      }
      split_block(text, lines[i].begin, lines[last].end, in_paragraphs, headings, out);
    }
    if (last + 1 < lines.size()) out.layout(lines[last].end, lines[last + 1].begin);
    i = last + 1;
  }
  return out.finish();
}

// A message's case texts segmented each on its own, the syntax between them layout.
SegmentedText segment_cases(std::string_view text,
                            const std::vector<std::pair<std::size_t, std::size_t>>& cases,
                            const SegmentationOptions& options) {
  SegmentedText result;
  result.whole = options.split == SplitSentences::kNone;
  result.message_cases = true;
  result.separators.emplace_back();
  std::size_t done = 0;
  for (const auto& [first, last] : cases) {
    result.separators.back().append(text.substr(done, first - done));
    SegmentedText part = segment_lines(text.substr(first, last - first), options, false);
    result.separators.back().append(part.separators.front());
    for (std::size_t i = 0; i < part.segments.size(); ++i) {
      result.segments.push_back(std::move(part.segments[i]));
      result.separators.push_back(std::move(part.separators[i + 1]));
    }
    done = last;
  }
  result.separators.back().append(text.substr(done));
  return result;
}

}  // namespace

SegmentedText segment_text(std::string_view text, const SegmentationOptions& options) {
  const std::optional<std::string> lifted = with_sentence_in_cases(text);
  std::string_view message = lifted ? std::string_view(*lifted) : text;
  const std::optional<MessageWithTargetCases> for_target =
      with_target_plural_cases(message, options.target_language);
  if (for_target) message = for_target->text;
  const auto cases = icu_case_texts(message);
  if (cases.empty()) return segment_lines(text, options);
  SegmentedText segmented = segment_cases(message, cases, options);
  if (for_target) segmented.plural_samples = for_target->samples;
  return segmented;
}

bool has_words(std::string_view segment) {
  std::size_t from = 0;
  for (const ProtectedSpan& span : find_protected_spans(segment)) {
    if (has_letter_or_digit(segment.substr(from, span.begin - from))) return true;
    from = span.end;
  }
  return has_letter_or_digit(segment.substr(from));
}

}  // namespace rpt::documents
