// rpt-translate --format html|xml|po|xliff: the whole input is one document (documents/document.h)
// or localization file (documents/catalog.h: the same file, missing translations filled in).
// translate_document parses it (docs/documents-markup.md, docs/localization.md), translates every
// segment in one Translator::translate call (spans and glossary as in line mode) and joins the
// document; n_best must be 1. Throws documents::MarkupError (malformed XML, a markup limit),
// documents::CatalogError (an unreadable PO/XLIFF file) or InvalidArgument (bad options, a
// segment that cannot be cut below the input limit); nothing is translated then.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "documents/document.h"
#include "engine/glossary.h"
#include "engine/translator.h"

namespace rpt::tools {

struct DocumentTranslationOptions {
  documents::DocumentOptions document;  // format, segmentation, elements left untouched
  DecodingOptions decoding;             // n_best must be 1
  SpanProtectionOptions spans;
  GlossaryUse glossary;  // borrowed: outlives the call
};

// Where the time went, in seconds.
struct DocumentTimes {
  double parse = 0;      // markup parsed, units cut into segments
  double prepare = 0;    // segments made ready (tokenized), over-long ones cut
  double translate = 0;  // the one Translator::translate call
  double render = 0;     // joined and written back into the markup
};

struct DocumentTranslation {
  std::string text;               // the translated document, UTF-8
  float score = 0.0f;             // the best hypothesis's: the sum of its segments' scores
  std::size_t parts = 0;          // text units (plain text: 1)
  std::size_t segments = 0;       // segments translated
  int units_kept_as_source = 0;   // translations whose tags did not fit their unit
  bool spans_kept = true;         // every segment kept its protected spans, every unit its tags
  int source_tokens = 0;          // of the segments
  std::size_t target_tokens = 0;  // of the best hypothesis
  int protected_spans = 0;        // protected in the segments
  std::vector<GlossaryTermResult> glossary_terms;  // matched, merged by entry
  std::optional<documents::CatalogStats> catalog;  // a localization file's counts
  DocumentTimes times;
};

DocumentTranslation translate_document(const Translator& translator,
                                       const DocumentTranslationOptions& options,
                                       std::string_view input);

}  // namespace rpt::tools
