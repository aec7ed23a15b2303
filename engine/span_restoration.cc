// SpanProtector::restore: masked spans and glossary targets swapped in, the accelerator marker
// put back, and the checks that the translation's spans are exactly the source's and that it
// holds every glossary target.
#include <algorithm>
#include <cctype>
#include <set>
#include <utility>

#include "engine/span_protection.h"

namespace rpt {
namespace {

using ByteRanges = std::vector<std::pair<std::size_t, std::size_t>>;

bool ascii_alnum(unsigned char c) { return std::isalnum(c) != 0; }

// Where the marker goes: before the first word that starts with its letter, else before the
// first word, else before the first ASCII letter (toolkits and the recognizer take a marker
// before an ASCII letter: "_Événements" is read as no marker, "É_vénements" as one); never
// inside a restored span. npos when the text has no ASCII letter.
std::size_t accelerator_position(const std::string& text, const std::string& letter,
                                 const ByteRanges& restored) {
  const auto inside_span = [&](std::size_t i) {
    return std::any_of(restored.begin(), restored.end(),
                       [i](const auto& r) { return i >= r.first && i < r.second; });
  };
  const auto word_start = [&](std::size_t i) {
    if (i == 0) return true;
    const auto before = static_cast<unsigned char>(text[i - 1]);
    return !ascii_alnum(before) && before < 0x80 && before != '_' && before != '&';
  };
  const auto same_letter = [&](std::size_t i) {
    if (letter.size() == 1) {
      return std::tolower(static_cast<unsigned char>(text[i])) ==
             std::tolower(static_cast<unsigned char>(letter[0]));
    }
    return text.compare(i, letter.size(), letter) == 0;
  };
  for (int pass = 0; pass < 3; ++pass) {
    for (std::size_t i = 0; i < text.size(); ++i) {
      if (!std::isalpha(static_cast<unsigned char>(text[i])) || inside_span(i)) continue;
      if ((pass == 2 || word_start(i)) && (pass > 0 || same_letter(i))) return i;
    }
  }
  return std::string::npos;
}

// The span texts of `text`; a symbol counts only where the source protected that symbol (one
// the model writes itself, ° ©, is no span: SpanProtector::drop_writable_symbols).
std::multiset<std::string> span_texts(std::string_view text, bool accelerators,
                                      const std::multiset<std::string>& expected) {
  std::multiset<std::string> texts;
  for (const ProtectedSpan& span : find_protected_spans(text, {.accelerators = accelerators})) {
    std::string span_text(text.substr(span.begin, span.end - span.begin));
    if (span.kind == SpanKind::kSymbol && !expected.contains(span_text)) continue;
    texts.emplace(std::move(span_text));
  }
  return texts;
}

// How often `part` occurs in `text`, without overlaps.
std::ptrdiff_t occurrences(std::string_view text, std::string_view part) {
  std::ptrdiff_t count = 0;
  for (std::size_t at = text.find(part); at != std::string_view::npos;
       at = text.find(part, at + part.size())) {
    ++count;
  }
  return count;
}

}  // namespace

RestoredTranslation SpanProtector::restore(const ProtectedSource& source,
                                           const std::vector<int>& target_ids) const {
  const Vocabulary& vocabulary = model_->target_vocabulary();
  std::vector<std::string> pieces;
  pieces.reserve(target_ids.size());
  for (int id : target_ids) pieces.push_back(vocabulary.to_token(id));
  ByteRanges ranges;
  const std::string decoded = model_->target_tokenizer().decode(pieces, &ranges);

  RestoredTranslation out;
  ByteRanges restored;  // where put-back spans are in out.text
  std::size_t at = 0;
  for (std::size_t i = 0; i < target_ids.size(); ++i) {
    const auto mask = std::find_if(source.masks.begin(), source.masks.end(),
                                   [&](const auto& m) { return m.target_id == target_ids[i]; });
    if (mask == source.masks.end() || ranges[i].first < at) continue;
    out.text.append(decoded, at, ranges[i].first - at);
    // A glossary target opening the translation may take a capital where the source's did.
    const bool opens = out.text.find_first_not_of(" \"'(") == std::string::npos;
    const std::string text =
        mask->initial_capital && opens ? capitalize_first(mask->original) : mask->original;
    // A term the search inserted where the model stopped follows its sentence's end directly
    // (a placeholder piece carries no word boundary): a word of its own.
    if (mask->term && !out.text.empty() &&
        std::string_view(".!?:;,").find(out.text.back()) != std::string_view::npos) {
      out.text.push_back(' ');
    }
    restored.emplace_back(out.text.size(), out.text.size() + text.size());
    out.text += text;
    at = ranges[i].second;
  }
  out.text.append(decoded, at);

  if (!source.accelerator_marker.empty()) {
    const std::size_t position =
        accelerator_position(out.text, source.accelerator_letter, restored);
    if (position != std::string::npos) out.text.insert(position, source.accelerator_marker);
  }
  // Markers are compared only when the source has one: an identifier such as target_name
  // carried into a translation can read as a marker, and is no invented span.
  const std::multiset<std::string> expected(source.expected.begin(), source.expected.end());
  out.spans_kept = span_texts(out.text, !source.accelerator_marker.empty(), expected) == expected;
  for (const std::string& word : source.words) {  // as often as the source has it
    out.spans_kept =
        out.spans_kept &&
        occurrences(out.text, word) == std::count(source.words.begin(), source.words.end(), word);
  }
  for (const ProtectedSource::Term& term : source.terms) {
    out.terms_kept.push_back(count_term(out.text, term.target, term.capitalized) >= term.matches);
  }
  return out;
}

}  // namespace rpt
