#include "documents/document.h"

#include <iterator>
#include <stdexcept>
#include <utility>

#include "documents/translation_count.h"

namespace rpt::documents {

Document Document::parse(std::string_view text, const DocumentOptions& options) {
  return parse(text, options, false);
}

Document Document::parse(std::string_view text, const DocumentOptions& options, bool in_catalog) {
  Document document;
  if (is_catalog_format(options.format)) {
    document.catalog_ = Catalog::parse(text, options.format, options.catalog);
    for (const CatalogText& entry : document.catalog_->texts()) {
      DocumentOptions own = options;
      own.format = entry.format;
      Document parsed = parse(entry.text, own, true);
      document.entries_.push_back({parsed.parts_.size(), parsed.markup_});
      std::move(parsed.parts_.begin(), parsed.parts_.end(), std::back_inserter(document.parts_));
    }
    return document;
  }
  if (options.format == TextFormat::kText || options.format == TextFormat::kMarkdown) {
    SegmentationOptions segmentation = options.segmentation;
    segmentation.markdown = options.format == TextFormat::kMarkdown;
    document.parts_.push_back(segment_text(text, segmentation));
    return document;
  }
  MarkupOptions markup;
  markup.kind = options.format == TextFormat::kHtml ? MarkupKind::kHtml : MarkupKind::kXml;
  markup.ignore_tags = options.ignore_tags;
  markup.target_language = options.target_language;
  document.markup_ = std::make_shared<const MarkupDocument>(MarkupDocument::parse(text, markup));
  // A line break in a unit's text is mostly a space where the source wraps a paragraph (HTML
  // collapses whitespace; <br> and blocks end units; DocBook and DITA wrap their paragraphs).
  // Cut there, a sentence reached the model in pieces ("The <x id=\"1\"/> headers" "that you may
  // wish ..."). Not in an XLIFF unit's inline markup (the string's own line breaks) nor where
  // the markup keeps its lines (markup_document.h).
  const std::vector<std::string>& units = document.markup_->units();
  for (std::size_t i = 0; i < units.size(); ++i) {
    SegmentationOptions segmentation = options.segmentation;
    if (segmentation.split == SplitSentences::kAuto && !in_catalog &&
        document.markup_->line_breaks_are_spaces(i)) {
      segmentation.split = SplitSentences::kSentences;
    }
    document.parts_.push_back(segment_text(units[i], segmentation));
  }
  return document;
}

std::size_t Document::segments() const {
  std::size_t count = 0;
  for (const SegmentedText& part : parts_) count += part.segments.size();
  return count;
}

Document::Rendered Document::render(const std::vector<std::string>& part_translations) const {
  require_translation_count("Document::render", part_translations.size(), parts_.size(), "parts");
  if (catalog_ != nullptr) return render_catalog(part_translations);
  if (markup_ == nullptr) return {part_translations[0], 0};
  MarkupDocument::Rendered rendered = markup_->render(part_translations);
  return {std::move(rendered.text), rendered.units_kept_as_source};
}

Document::Rendered Document::render_catalog(
    const std::vector<std::string>& part_translations) const {
  Rendered rendered;
  std::vector<std::string> translations;
  translations.reserve(entries_.size());
  auto next = part_translations.begin();
  for (const CatalogEntry& entry : entries_) {
    const std::vector<std::string> own(next, next + static_cast<long>(entry.parts));
    next += static_cast<long>(entry.parts);
    if (entry.markup == nullptr) {
      translations.push_back(own.front());
      continue;
    }
    MarkupDocument::Rendered text = entry.markup->render(own);
    translations.push_back(std::move(text.text));
    rendered.parts_kept_as_source += text.units_kept_as_source;
  }
  rendered.text = catalog_->render(translations);
  return rendered;
}

}  // namespace rpt::documents
