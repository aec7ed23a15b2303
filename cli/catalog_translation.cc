#include "cli/catalog_translation.h"

#include <chrono>
#include <utility>
#include <vector>

namespace rpt::tools {

CatalogTranslation translate_catalog(const Translator& translator,
                                     const CatalogTranslationOptions& options,
                                     std::string_view input) {
  CatalogTranslation out;
  const auto start = std::chrono::steady_clock::now();
  const auto catalog = documents::Catalog::parse(input, options.format, options.catalog);
  out.stats = catalog->stats();
  std::vector<documents::Document> documents;
  documents.reserve(catalog->texts().size());
  for (const documents::CatalogText& text : catalog->texts()) {
    documents::DocumentOptions document = options.translation.document;
    document.format = text.format;
    documents.push_back(documents::Document::parse(text.text, document));
    out.segments += documents.back().segments();
  }
  out.times.parse = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  TranslatedDocuments translated =
      translate_documents(translator, options.translation, documents, out.times);
  const auto render_start = std::chrono::steady_clock::now();
  std::vector<std::string> translations;
  translations.reserve(translated.results.size());
  for (std::size_t i = 0; i < translated.results.size(); ++i) {
    TranslationHypothesis& best = translated.results[i].hypotheses.front();
    out.texts_with_spans_lost += best.spans_kept ? 0 : 1;
    out.units_kept_as_source += translated.units_kept_as_source[i];
    translations.push_back(std::move(best.text));
  }
  out.file = catalog->render(translations);
  out.times.render +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - render_start).count();
  return out;
}

}  // namespace rpt::tools
