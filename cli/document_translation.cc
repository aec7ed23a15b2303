#include "cli/document_translation.h"

#include <algorithm>
#include <chrono>
#include <iterator>
#include <utility>

#include "engine/errors.h"
#include "engine/text_segments.h"

namespace rpt::tools {
namespace {

// Seconds since `lap` started, starting the next lap now.
double lap_seconds(std::chrono::steady_clock::time_point& lap) {
  const auto now = std::chrono::steady_clock::now();
  const double seconds = std::chrono::duration<double>(now - lap).count();
  lap = now;
  return seconds;
}

// Every segment of every part, in order: what Translator::translate takes.
std::vector<std::string> all_segments(const documents::Document& document) {
  std::vector<std::string> segments;
  segments.reserve(document.segments());
  for (const documents::SegmentedText& part : document.parts()) {
    segments.insert(segments.end(), part.segments.begin(), part.segments.end());
  }
  return segments;
}

// The units that kept their source: the document rendered again from its parts' best
// translations (join_document tells only whether any did).
int count_units_kept_as_source(const documents::Document& document,
                               std::vector<TranslationResult> segments) {
  std::vector<std::string> part_translations;
  auto next = segments.begin();
  for (const documents::SegmentedText& part : document.parts()) {
    const auto end = next + static_cast<long>(part.segments.size());
    std::vector<TranslationResult> own(std::make_move_iterator(next), std::make_move_iterator(end));
    part_translations.push_back(join_results(part, std::move(own), 1).hypotheses.front().text);
    next = end;
  }
  return document.render(part_translations).parts_kept_as_source;
}

}  // namespace

TranslatedDocuments translate_documents(const Translator& translator,
                                        const DocumentTranslationOptions& options,
                                        std::vector<documents::Document>& documents,
                                        DocumentTimes& times) {
  RPT_CHECK(options.decoding.n_best == 1, InvalidArgument,
            "a document is translated once: n_best must be 1, not ", options.decoding.n_best);
  translator.check_options(options.decoding);
  auto lap = std::chrono::steady_clock::now();
  std::vector<std::string> sources;
  std::size_t part_index = 0;
  for (documents::Document& document : documents) {
    for (documents::SegmentedText& part : document.parts()) {
      translator.prepare_segments(part, part_index++, options.spans, options.glossary);
    }
    std::vector<std::string> own = all_segments(document);
    sources.insert(sources.end(), std::make_move_iterator(own.begin()),
                   std::make_move_iterator(own.end()));
  }
  times.prepare += lap_seconds(lap);

  std::vector<TranslationResult> results;
  if (!sources.empty()) {
    results = translator.translate(sources, options.decoding, options.spans, options.glossary);
  }
  times.translate += lap_seconds(lap);

  TranslatedDocuments out;
  out.results.reserve(documents.size());
  out.units_kept_as_source.reserve(documents.size());
  auto next = results.begin();
  for (const documents::Document& document : documents) {
    const auto end = next + static_cast<long>(document.segments());
    out.results.push_back(join_document(document, {next, end}, 1));
    out.units_kept_as_source.push_back(out.results.back().hypotheses.front().spans_kept
                                           ? 0
                                           : count_units_kept_as_source(document, {next, end}));
    next = end;
  }
  times.render += lap_seconds(lap);
  return out;
}

DocumentTranslation translate_document(const Translator& translator,
                                       const DocumentTranslationOptions& options,
                                       std::string_view input) {
  DocumentTranslation out;
  auto lap = std::chrono::steady_clock::now();
  std::vector<documents::Document> documents;
  documents.push_back(documents::Document::parse(input, options.document));
  out.times.parse = lap_seconds(lap);
  TranslatedDocuments translated = translate_documents(translator, options, documents, out.times);
  lap = std::chrono::steady_clock::now();
  const documents::Document& document = documents.front();
  TranslationResult& joined = translated.results.front();
  TranslationHypothesis& best = joined.hypotheses.front();
  out.units_kept_as_source = translated.units_kept_as_source.front();
  out.text = std::move(best.text);
  out.score = best.score;
  out.parts = document.parts().size();
  out.segments = static_cast<std::size_t>(joined.segments);
  out.spans_kept = best.spans_kept;
  out.source_tokens = joined.source_tokens;
  out.target_tokens = best.ids.size();
  out.protected_spans = joined.protected_spans;
  out.glossary_terms = std::move(joined.glossary_terms);
  out.times.render += lap_seconds(lap);
  return out;
}

}  // namespace rpt::tools
