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

DocumentTranslation translate_document(const Translator& translator,
                                       const DocumentTranslationOptions& options,
                                       std::string_view input) {
  RPT_CHECK(options.decoding.n_best == 1, InvalidArgument,
            "a document is translated once: n_best must be 1, not ", options.decoding.n_best);
  translator.check_options(options.decoding);
  DocumentTranslation out;
  auto lap = std::chrono::steady_clock::now();

  documents::Document document = documents::Document::parse(input, options.document);
  out.times.parse = lap_seconds(lap);

  for (std::size_t i = 0; i < document.parts().size(); ++i) {
    translator.prepare_segments(document.parts()[i], i, options.decoding, options.spans,
                                options.glossary);
  }
  const std::vector<std::string> sources = all_segments(document);
  out.times.prepare = lap_seconds(lap);

  std::vector<TranslationResult> results;
  if (!sources.empty()) {
    results = translator.translate(sources, options.decoding, options.spans, options.glossary);
  }
  out.times.translate = lap_seconds(lap);

  TranslationResult joined = join_document(document, results, 1);
  TranslationHypothesis& best = joined.hypotheses.front();
  if (!best.spans_kept) out.units_kept_as_source = count_units_kept_as_source(document, results);
  out.text = std::move(best.text);
  out.score = best.score;
  out.parts = document.parts().size();
  out.segments = static_cast<std::size_t>(joined.segments);
  out.spans_kept = best.spans_kept;
  out.source_tokens = joined.source_tokens;
  out.target_tokens = best.ids.size();
  out.protected_spans = joined.protected_spans;
  out.glossary_terms = std::move(joined.glossary_terms);
  if (const documents::CatalogStats* stats = document.catalog_stats()) out.catalog = *stats;
  out.times.render = lap_seconds(lap);
  return out;
}

}  // namespace rpt::tools
