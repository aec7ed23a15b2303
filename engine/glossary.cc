#include "engine/glossary.h"

#include <unicode/uchar.h>
#include <unicode/utf8.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <set>
#include <sstream>

#include "common/glossary_file.h"
#include "common/text_hygiene.h"
#include "kernels/errors.h"

namespace rpt {
namespace {

struct CodePoints {
  std::u32string folded;             // simple case folding of each code point
  std::vector<std::size_t> offsets;  // [code points + 1]: byte offset of each, then the end
  std::u32string original;
};

CodePoints decode(std::string_view text) {
  CodePoints out;
  char32_t c = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    out.offsets.push_back(i);
    if (!next_code_point(text, &i, &c)) {  // callers pass valid UTF-8; stay total anyway
      c = 0xFFFD;
      ++i;
    }
    out.original.push_back(c);
    out.folded.push_back(
        static_cast<char32_t>(u_foldCase(static_cast<UChar32>(c), U_FOLD_CASE_DEFAULT)));
  }
  out.offsets.push_back(text.size());
  return out;
}

// Letters, digits, marks and connector punctuation: what a word is made of.
bool word_char(char32_t c) {
  const auto cp = static_cast<UChar32>(c);
  if (u_isalnum(cp)) return true;
  const int8_t type = u_charType(cp);
  return type == U_NON_SPACING_MARK || type == U_COMBINING_SPACING_MARK ||
         type == U_ENCLOSING_MARK || type == U_CONNECTOR_PUNCTUATION;
}

std::uint64_t fnv1a(std::string_view bytes, std::uint64_t hash) {
  for (const char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

std::string describe(std::string_view what, std::size_t index) {
  return std::string(what) + "[" + std::to_string(index) + "]";
}

void check_term(std::string_view term, const std::string& where, const char* side) {
  RPT_CHECK(!term.empty(), InvalidArgument, where, ": the ", side, " term is empty");
  RPT_CHECK(is_valid_utf8(term), InvalidArgument, where, ": the ", side,
            " term is not valid UTF-8");
  RPT_CHECK(term.find('\0') == std::string_view::npos, InvalidArgument, where, ": the ", side,
            " term contains U+0000 (NUL)");
  RPT_CHECK(!is_blank_text(term), InvalidArgument, where, ": the ", side, " term is blank");
  RPT_CHECK(term.size() <= GlossaryLimits::kTermBytes, InvalidArgument, where, ": the ", side,
            " term has ", term.size(), " bytes, over the limit of ", GlossaryLimits::kTermBytes);
  const auto spans = find_protected_spans(term, {.accelerators = false});
  RPT_CHECK(spans.empty(), InvalidArgument, where, ": the ", side, " term holds a protected span (",
            std::string(term.substr(spans.empty() ? 0 : spans[0].begin,
                                    spans.empty() ? 0 : spans[0].end - spans[0].begin)),
            "); placeholders and tags are kept by span protection, not by a glossary");
}

}  // namespace

GlossaryMethod parse_glossary_method(std::string_view name) {
  if (name == "mask") return GlossaryMethod::kMask;
  if (name == "phrase") return GlossaryMethod::kPhrase;
  RPT_THROW(InvalidArgument, "glossary method must be \"mask\" or \"phrase\", not \"", name, "\"");
}

const char* glossary_method_name(GlossaryMethod method) {
  return method == GlossaryMethod::kMask ? "mask" : "phrase";
}

Glossary::Glossary(std::vector<GlossaryEntry> entries, int max_entries, std::string_view what,
                   const EntryNames& entry_name) {
  RPT_CHECK(static_cast<long>(entries.size()) <= max_entries, InvalidArgument, what, " has ",
            entries.size(), " entries, over the limit of ", max_entries);
  std::set<std::size_t> lengths;
  std::uint64_t low = 0xcbf29ce484222325ULL;
  std::uint64_t high = 0x84222325cbf29ce4ULL;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    GlossaryEntry& entry = entries[i];
    const std::string where = entry_name ? entry_name(i) : describe(what, i);
    check_term(entry.source, where, "source");
    check_term(entry.target, where, "target");
    std::u32string folded = decode(entry.source).folded;
    const auto known = by_folded_source_.find(folded);
    if (known != by_folded_source_.end()) {
      const GlossaryEntry& first = entries_[static_cast<std::size_t>(known->second)];
      RPT_CHECK(first.target == entry.target, InvalidArgument, where, ": source \"", entry.source,
                "\" is listed before with target \"", first.target, "\", here with \"",
                entry.target, "\"");
      continue;
    }
    lengths.insert(folded.size());
    by_folded_source_.emplace(std::move(folded), static_cast<int>(entries_.size()));
    for (const std::string* text : {&entry.source, &entry.target}) {
      const std::string sized = std::to_string(text->size()) + ":";
      low = fnv1a(*text, fnv1a(sized, low));
      high = fnv1a(*text, fnv1a(sized, high ^ 0x9e3779b97f4a7c15ULL));
    }
    entries_.push_back(std::move(entry));
  }
  lengths_.assign(lengths.rbegin(), lengths.rend());
  char digest[40];
  std::snprintf(digest, sizeof digest, "%016llx%016llx", static_cast<unsigned long long>(high),
                static_cast<unsigned long long>(low));
  identity_ = std::to_string(entries_.size()) + ":" + digest;
}

Glossary Glossary::load(const std::string& path, int max_entries) {
  std::vector<GlossaryFileEntry> lines;
  try {
    lines = read_glossary_file(path, max_entries);
  } catch (const std::invalid_argument& e) {
    RPT_THROW(InvalidArgument, e.what());
  }
  std::vector<GlossaryEntry> entries;
  entries.reserve(lines.size());
  for (GlossaryFileEntry& line : lines) {
    entries.push_back({std::move(line.source), std::move(line.target)});
  }
  return Glossary(std::move(entries), max_entries, path, [&](std::size_t index) {
    return path + ":" + std::to_string(lines.at(index).line);
  });
}

int Glossary::find(const std::u32string& folded) const {
  const auto found = by_folded_source_.find(folded);
  return found == by_folded_source_.end() ? -1 : found->second;
}

bool GlossaryUse::empty() const {
  return std::all_of(glossaries.begin(), glossaries.end(),
                     [](const Glossary* g) { return g == nullptr || g->empty(); });
}

std::string GlossaryUse::identity() const {
  if (empty()) return {};
  std::string out = glossary_method_name(method);
  for (const Glossary* g : glossaries) {
    if (g) out += "|" + g->identity();
  }
  return out;
}

std::vector<GlossaryMatch> match_glossary(std::string_view text, const GlossaryUse& use,
                                          const std::vector<ProtectedSpan>& spans) {
  std::vector<GlossaryMatch> matches;
  if (use.empty()) return matches;
  const CodePoints cp = decode(text);
  const std::size_t n = cp.folded.size();
  // The first letter or digit of the text: where a capital may be sentence-initial.
  std::size_t first_word = 0;
  while (first_word < n && !word_char(cp.original[first_word])) ++first_word;
  std::size_t next_span = 0;
  std::u32string key;
  for (std::size_t i = 0; i < n;) {
    const std::size_t begin_byte = cp.offsets[i];
    while (next_span < spans.size() && spans[next_span].end <= begin_byte) ++next_span;
    if (next_span < spans.size() && spans[next_span].begin <= begin_byte) {  // inside a span
      while (i < n && cp.offsets[i] < spans[next_span].end) ++i;
      continue;
    }
    const bool starts_word = i == 0 || !word_char(cp.folded[i - 1]) || !word_char(cp.folded[i]);
    int best_glossary = -1;
    int best_entry = -1;
    std::size_t best_length = 0;
    for (std::size_t g = 0; starts_word && g < use.glossaries.size(); ++g) {
      const Glossary* glossary = use.glossaries[g];
      if (!glossary) continue;
      for (const std::size_t length : glossary->lengths()) {
        if (length <= best_length) break;  // longest first: no longer one in this glossary
        const std::size_t end = i + length;
        if (end > n) continue;
        if (end < n && word_char(cp.folded[end - 1]) && word_char(cp.folded[end])) continue;
        const std::size_t end_byte = cp.offsets[end];
        if (next_span < spans.size() && spans[next_span].begin < end_byte) continue;
        key.assign(cp.folded, i, length);
        const int entry = glossary->find(key);
        if (entry < 0) continue;
        best_glossary = static_cast<int>(g);
        best_entry = entry;
        best_length = length;
        break;
      }
    }
    if (best_entry < 0) {
      ++i;
      continue;
    }
    const GlossaryEntry& entry = use.glossaries[static_cast<std::size_t>(best_glossary)]
                                     ->entries()[static_cast<std::size_t>(best_entry)];
    const auto source_first = decode(entry.source).original.front();
    const auto text_first = static_cast<UChar32>(cp.original[i]);
    const bool capitalized =
        u_isupper(text_first) && !u_isupper(static_cast<UChar32>(source_first));
    matches.push_back({best_glossary, best_entry, begin_byte, cp.offsets[i + best_length],
                       capitalized, capitalized && i == first_word});
    i += best_length;
  }
  return matches;
}

std::string capitalize_first(std::string_view text) {
  if (text.empty()) return {};
  std::size_t i = 0;
  char32_t c = 0;
  if (!next_code_point(text, &i, &c)) return std::string(text);
  const UChar32 upper = u_toupper(static_cast<UChar32>(c));
  char buffer[U8_MAX_LENGTH];
  int32_t length = 0;
  UBool error = false;
  U8_APPEND(buffer, length, U8_MAX_LENGTH, upper, error);
  if (error) return std::string(text);
  return std::string(buffer, static_cast<std::size_t>(length)) + std::string(text.substr(i));
}

int count_term(std::string_view text, std::string_view term, bool also_capitalized) {
  const auto occurrences = [text](std::string_view what) {
    int count = 0;
    if (what.empty()) return count;
    for (std::size_t at = text.find(what); at != std::string_view::npos;
         at = text.find(what, at + what.size())) {
      ++count;
    }
    return count;
  };
  int count = occurrences(term);
  if (also_capitalized) {
    const std::string capital = capitalize_first(term);
    if (capital != term) count += occurrences(capital);
  }
  return count;
}

}  // namespace rpt
