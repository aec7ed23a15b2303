#include "documents/document.h"

#include <stdexcept>

namespace rpt::documents {

TextFormat parse_text_format(std::string_view name) {
  if (name == "text") return TextFormat::kText;
  if (name == "html") return TextFormat::kHtml;
  if (name == "xml") return TextFormat::kXml;
  throw std::invalid_argument("format is '" + std::string(name) +
                              "'; it must be text, html or xml");
}

const char* text_format_name(TextFormat format) {
  switch (format) {
    case TextFormat::kText:
      return "text";
    case TextFormat::kHtml:
      return "html";
    case TextFormat::kXml:
      return "xml";
  }
  return "text";
}

Document Document::parse(std::string_view text, const DocumentOptions& options) {
  Document document;
  if (options.format == TextFormat::kText) {
    document.parts_.push_back(segment_text(text, options.segmentation));
    return document;
  }
  MarkupOptions markup;
  markup.kind = options.format == TextFormat::kHtml ? MarkupKind::kHtml : MarkupKind::kXml;
  markup.ignore_tags = options.ignore_tags;
  document.markup_ = std::make_shared<const MarkupDocument>(MarkupDocument::parse(text, markup));
  for (const std::string& unit : document.markup_->units()) {
    document.parts_.push_back(segment_text(unit, options.segmentation));
  }
  return document;
}

std::size_t Document::segments() const {
  std::size_t count = 0;
  for (const SegmentedText& part : parts_) count += part.segments.size();
  return count;
}

Document::Rendered Document::render(const std::vector<std::string>& part_translations) const {
  if (part_translations.size() != parts_.size()) {
    throw std::invalid_argument("Document::render: " + std::to_string(part_translations.size()) +
                                " translations for " + std::to_string(parts_.size()) + " parts");
  }
  if (markup_ == nullptr) return {part_translations[0], 0};
  MarkupDocument::Rendered rendered = markup_->render(part_translations);
  return {std::move(rendered.text), rendered.units_kept_as_source};
}

}  // namespace rpt::documents
