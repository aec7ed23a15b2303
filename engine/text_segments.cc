#include "engine/text_segments.h"

#include <algorithm>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>

#include <unicode/uchar.h>

#include "common/text_hygiene.h"
#include "engine/errors.h"
#include "engine/tokenizer.h"
#include "spans/protected_spans.h"

namespace rpt {
namespace {

void merge_terms(const std::vector<GlossaryTermResult>& terms,
                 std::vector<GlossaryTermResult>* merged) {
  for (const GlossaryTermResult& term : terms) {
    auto same = std::find_if(merged->begin(), merged->end(), [&term](const auto& other) {
      return other.source == term.source && other.target == term.target;
    });
    if (same == merged->end()) {
      merged->push_back(term);
    } else {
      same->matches += term.matches;
      same->kept = same->kept && term.kept;
    }
  }
}

// The letters of `text` (UTF-8; bytes that are not are skipped).
int letters_in(std::string_view text) {
  int letters = 0;
  for (std::size_t i = 0; i < text.size();) {
    char32_t code = 0;
    if (!next_code_point(text, &i, &code)) {
      ++i;
      continue;
    }
    if (u_isalpha(static_cast<UChar32>(code))) ++letters;
  }
  return letters;
}

// True when most of the letters of `pieces` (read as `ids`) reach the model only as byte-fallback
// pieces or as the unknown piece: text in a script its vocabulary was not trained on, which it
// turns into byte soup (broken UTF-8 and repetitions) rather than a translation.
bool mostly_unreadable(const std::vector<std::string>& pieces, const std::vector<int>& ids,
                       int unknown_id) {
  int letters = 0;
  int unreadable = 0;
  std::string bytes;  // a run of byte pieces, as the bytes they stand for
  for (std::size_t i = 0; i <= pieces.size(); ++i) {
    const std::optional<unsigned char> byte =
        i < pieces.size() ? fallback_byte(pieces[i]) : std::nullopt;
    if (byte) {
      bytes.push_back(static_cast<char>(*byte));
      continue;
    }
    const int run = letters_in(bytes);  // the run of bytes this piece ends
    letters += run;
    unreadable += run;
    bytes.clear();
    if (i == pieces.size()) break;
    const int own = letters_in(pieces[i]);
    letters += own;
    if (ids[i] == unknown_id) unreadable += own;
  }
  return 2 * unreadable > letters;
}

// `text` with each blank inside it that is not U+0020 (a tab, no-break, thin, narrow no-break or
// ideographic space: Unicode Zs) as U+0020. The model reads a space there, as SentencePiece's
// default normalizer (nmt_nfkc) gives it to models trained with it; a vocabulary trained without
// normalization (the demo models') has no piece for them and reads bytes it never saw in training
// ("Open&nbsp;the file." came back as "Öffne ©-Datei."). Only what the model reads changes: the
// blanks around a segment are layout, kept as they came.
std::string with_plain_blanks(const std::string& text) {
  std::string plain;
  plain.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t start = i;
    char32_t code = 0;
    if (!next_code_point(text, &i, &code)) {
      plain.push_back(text[i++]);  // not UTF-8: passed on as it is, for the tokenizer to judge
      continue;
    }
    const bool other_blank =
        code == U'\t' ||
        (code != U' ' && u_charType(static_cast<UChar32>(code)) == U_SPACE_SEPARATOR);
    if (other_blank) {
      plain.push_back(' ');
    } else {
      plain.append(text, start, i - start);
    }
  }
  return plain;
}

}  // namespace

PreparedSource prepare_source(const Model& model, const std::string& segment,
                              const SourcePreparation& how) {
  PreparedSource prepared;
  std::optional<ProtectedSource> rewritten;
  if (how.protector) rewritten = how.protector->protect(segment, how.spans, how.glossary);
  const bool constrained = rewritten && rewritten->constraints;
  const std::vector<std::string> pieces =
      model.source_tokenizer().encode(with_plain_blanks(constrained ? rewritten->text : segment));
  const Vocabulary& vocabulary = model.source_vocabulary();
  std::vector<int> text_ids;
  text_ids.reserve(pieces.size());
  for (const std::string& piece : pieces) text_ids.push_back(vocabulary.to_id(piece));
  // A source the model reads nothing of, or mostly as bytes, stays empty: it becomes layout,
  // kept as it was, not a lone prefix or eos or byte soup. Words it cannot read were masked
  // (engine/unreadable_words.h): then it is judged as it came, or a sentence in another script
  // would reach it as placeholders alone.
  if (pieces.empty() || mostly_unreadable(pieces, text_ids, vocabulary.unk_id())) return prepared;
  if (constrained && !rewritten->words.empty()) {
    const std::vector<std::string> own =
        model.source_tokenizer().encode(with_plain_blanks(segment));
    std::vector<int> own_ids;
    own_ids.reserve(own.size());
    for (const std::string& piece : own) own_ids.push_back(vocabulary.to_id(piece));
    if (mostly_unreadable(own, own_ids, vocabulary.unk_id())) return prepared;
  }
  const std::vector<int>& prefix = model.source_prefix_ids(how.language_pair);
  const bool eos = model.config().append_source_eos;
  prepared.ids.reserve(prefix.size() + text_ids.size() + 1);
  prepared.ids.assign(prefix.begin(), prefix.end());
  prepared.ids.insert(prepared.ids.end(), text_ids.begin(), text_ids.end());
  if (eos) prepared.ids.push_back(vocabulary.to_id(model.config().special_tokens.eos));
  prepared.added_ids = static_cast<int>(prefix.size()) + (eos ? 1 : 0);
  if (constrained) prepared.spans = std::make_shared<const ProtectedSource>(std::move(*rewritten));
  return prepared;
}

SegmentLimits segment_limits(const Model& model, int max_input_length, int max_length) {
  int whole = std::min(max_input_length, std::max(max_length / 2, kShortestCutForOutput));
  if (const int own = model.config().max_segment_tokens; own > 0) whole = std::min(whole, own);
  return {.max_input_length = max_input_length, .max_whole = whole};
}

std::vector<PreparedSource> prepare_segments(
    documents::SegmentedText& text, const SegmentLimits& limits,
    const std::function<PreparedSource(const std::string& segment)>& prepare,
    const documents::KeepTogether& keep_together) {
  std::vector<PreparedSource> prepared;
  const int max_input_length = limits.max_input_length;
  // A text segmented whole (--split-sentences none) is cut only where the model cannot read it.
  const int whole = limits.max_whole > 0 && !text.whole
                        ? std::min(limits.max_whole, max_input_length)
                        : max_input_length;
  // Raw bytes bound the tokenizer's work: a segment this long cannot fit and is cut first.
  const auto byte_limit = static_cast<std::size_t>(max_input_length) * 64;
  for (std::size_t i = 0; i < text.segments.size(); ++i) {
    std::optional<PreparedSource> segment;
    while (documents::has_words(text.segments[i])) {  // a cut part may have none
      if (text.segments[i].size() <= byte_limit) {
        segment = prepare(text.segments[i]);
        const int ids = segment->text_ids();
        if (ids <= whole) break;
        // Over what the model translates whole: at every clause mark (a list item by item),
        // else between words; kept whole when it has neither and fits.
        if (ids <= max_input_length) {
          if (documents::cut_at_clauses(text, i, keep_together) == 1 &&
              !documents::cut_segment(text, i, keep_together,
                                      documents::CutPlaces::kBetweenWords)) {
            break;
          }
          segment.reset();
          continue;
        }
        segment.reset();
      }
      RPT_CHECK(documents::cut_segment(text, i, keep_together), InvalidArgument, "a segment of ",
                text.segments[i].size(), " bytes cannot be cut below the limit of ",
                max_input_length, " tokens");
    }
    // Nothing to translate, or nothing the model reads (characters its normalizer drops).
    if (!segment || segment->ids.empty()) {
      documents::keep_as_layout(text, i--);
      continue;
    }
    prepared.push_back(std::move(*segment));
  }
  return prepared;
}

namespace {

// The result of `pieces` (segments of a part, or parts of a document) put together: per rank,
// text_of(the pieces' texts of that rank); the rest as join_results says.
TranslationResult combine(
    std::vector<TranslationResult> pieces, int n_best,
    const std::function<std::string(const std::vector<std::string>&, bool* kept)>& text_of) {
  TranslationResult joined;
  joined.segments = 0;
  std::size_t ranks = pieces.empty() ? static_cast<std::size_t>(std::max(n_best, 1)) : 0;
  for (const TranslationResult& piece : pieces) {
    RPT_CHECK(!piece.hypotheses.empty(), InvalidArgument, "a segment has no hypothesis");
    joined.source_tokens += piece.source_tokens;
    joined.protected_spans += piece.protected_spans;
    joined.segments += piece.segments;
    merge_terms(piece.glossary_terms, &joined.glossary_terms);
    ranks = std::max(ranks, piece.hypotheses.size());
  }
  joined.hypotheses.resize(ranks);
  std::vector<std::string> texts(pieces.size());
  for (std::size_t rank = 0; rank < ranks; ++rank) {
    TranslationHypothesis& out = joined.hypotheses[rank];
    for (std::size_t i = 0; i < pieces.size(); ++i) {
      std::vector<TranslationHypothesis>& hypotheses = pieces[i].hypotheses;
      TranslationHypothesis& h = hypotheses[std::min(rank, hypotheses.size() - 1)];
      // A piece with fewer hypotheses gives its last again: copied, not moved.
      texts[i] = h.text;
      out.tokens.insert(out.tokens.end(), h.tokens.begin(), h.tokens.end());
      out.ids.insert(out.ids.end(), h.ids.begin(), h.ids.end());
      out.score += h.score;
      out.spans_kept = out.spans_kept && h.spans_kept;
      out.terms_kept = out.terms_kept && h.terms_kept;
    }
    bool kept = true;
    out.text = text_of(texts, &kept);
    out.spans_kept = out.spans_kept && kept;
  }
  return joined;
}

}  // namespace

documents::KeepTogether glossary_terms_of(const GlossaryUse& glossary) {
  return [&glossary](std::string_view text) {
    std::vector<std::pair<std::size_t, std::size_t>> terms;
    for (const GlossaryMatch& match : match_glossary(text, glossary, find_protected_spans(text))) {
      terms.emplace_back(match.begin, match.end);
    }
    return terms;
  };
}

TranslationResult join_results(const documents::SegmentedText& text,
                               std::vector<TranslationResult> segments, int n_best) {
  RPT_CHECK(segments.size() == text.segments.size(), InvalidArgument,
            "join_results: ", segments.size(), " results for ", text.segments.size(), " segments");
  for (TranslationResult& segment : segments) segment.segments = 1;
  return combine(std::move(segments), n_best,
                 [&text](const std::vector<std::string>& translations, bool*) {
                   return documents::join_segments(text, translations);
                 });
}

TranslationResult join_document(const documents::Document& document,
                                std::vector<TranslationResult> segments, int n_best) {
  RPT_CHECK(segments.size() == document.segments(), InvalidArgument,
            "join_document: ", segments.size(), " results for ", document.segments(), " segments");
  std::vector<TranslationResult> parts;
  auto next = segments.begin();
  for (const documents::SegmentedText& part : document.parts()) {
    const auto end = next + static_cast<long>(part.segments.size());
    parts.push_back(join_results(
        part,
        std::vector<TranslationResult>(std::make_move_iterator(next), std::make_move_iterator(end)),
        n_best));
    next = end;
  }
  return combine(std::move(parts), n_best,
                 [&document](const std::vector<std::string>& translations, bool* kept) {
                   documents::Document::Rendered rendered = document.render(translations);
                   *kept = rendered.parts_kept_as_source == 0;
                   return std::move(rendered.text);
                 });
}

}  // namespace rpt
