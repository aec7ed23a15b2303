// A text as rpt translates it: plain text, HTML or XML cut into parts (plain text: the text; a
// markup document: its text units, markup_document.h), each part cut into segments with its
// layout (segmenter.h). A localization file (catalog.h) is the parts of the texts it needs
// translated, each text plain or an XML fragment as above. The engine translates the segments;
// render() writes the text back from each part's translation, layout and markup as they came.
//
// Thread safety: a Document is a value; const calls may run concurrently.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "documents/catalog.h"
#include "documents/markup_document.h"
#include "documents/segmenter.h"
#include "documents/text_format.h"

namespace rpt::documents {

struct DocumentOptions {
  TextFormat format = TextFormat::kText;
  SegmentationOptions segmentation;
  std::vector<std::string> ignore_tags;  // HTML/XML: elements left untouched (MarkupOptions)
  std::string target_language;  // HTML/XML: the root's lang (MarkupOptions); empty: untouched
  CatalogOptions catalog;       // PO/XLIFF: the target language (required), fuzzy and review marks
};

class Document {
 public:
  // Throws MarkupError for XML that is not well-formed or a markup limit exceeded, CatalogError
  // for a localization file that cannot be read.
  static Document parse(std::string_view text, const DocumentOptions& options);

  // The parts in order, each cut into segments. Mutable: a caller may cut a segment that is too
  // long for its model (cut_segment) or keep one as layout (keep_as_layout).
  std::vector<SegmentedText>& parts() { return parts_; }
  const std::vector<SegmentedText>& parts() const { return parts_; }
  std::size_t segments() const;

  // A localization file's counts (null for other formats).
  const CatalogStats* catalog_stats() const { return catalog_ ? &catalog_->stats() : nullptr; }

  struct Rendered {
    std::string text;
    int parts_kept_as_source = 0;  // markup: translations whose tags did not fit their unit
  };
  // The text with part i translated as part_translations[i] (the joined translation of its
  // segments); std::invalid_argument on a count that does not match.
  Rendered render(const std::vector<std::string>& part_translations) const;

 private:
  // `in_catalog`: one text of a localization file, whose line breaks are its own.
  static Document parse(std::string_view text, const DocumentOptions& options, bool in_catalog);
  Rendered render_catalog(const std::vector<std::string>& part_translations) const;

  // A localization file's text: its first part in parts_ and its markup.
  struct CatalogEntry {
    std::size_t parts = 1;
    std::shared_ptr<const MarkupDocument> markup;  // null: plain text, one part
  };

  std::vector<SegmentedText> parts_;
  std::shared_ptr<const MarkupDocument> markup_;  // null: plain text (or a catalogue)
  std::shared_ptr<const Catalog> catalog_;        // null: not a localization file
  std::vector<CatalogEntry> entries_;             // per catalogue text
};

}  // namespace rpt::documents
