// rpt-translate --format po|xliff: a localization file in, the same file out with its missing
// translations filled in (documents/catalog.h, docs/localization.md).
//
// translate_catalog parses the file, makes each text to translate a document (a msgid: plain
// text, segmented; an XLIFF source with inline elements: an XML fragment, its tags kept), and
// translates every segment of every entry in one Translator::translate call (batched by the
// translator, as rows in flight), then writes the file back with the translations marked for
// review. Throws documents::CatalogError for a file that cannot be read (gettext's or
// libxml2's message and line), InvalidArgument as translate_document does.
#pragma once

#include <string>
#include <string_view>

#include "cli/document_translation.h"
#include "documents/catalog.h"

namespace rpt::tools {

struct CatalogTranslationOptions {
  documents::CatalogFormat format = documents::CatalogFormat::kPo;
  documents::CatalogOptions catalog;  // target language, fuzzy, review marks, limits
  // Segmentation, ignored elements, decoding (n_best 1), spans, glossary; the format of each
  // text is the catalogue's.
  DocumentTranslationOptions translation;
};

struct CatalogTranslation {
  std::string file;  // the translated file, UTF-8
  documents::CatalogStats stats;
  std::size_t segments = 0;       // segments translated
  int units_kept_as_source = 0;   // inline-element units whose translation lost a tag
  int texts_with_spans_lost = 0;  // texts where a protected span or tag did not survive
  DocumentTimes times;            // parse: the file and its texts; render: joined and written
};

CatalogTranslation translate_catalog(const Translator& translator,
                                     const CatalogTranslationOptions& options,
                                     std::string_view input);

}  // namespace rpt::tools
