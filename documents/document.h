// A text as rpt translates it: plain text, HTML or XML cut into parts (plain text: the text; a
// markup document: its text units, markup_document.h), each part cut into segments with its
// layout (segmenter.h). The engine translates the segments; render() writes the text back from
// each part's translation, layout and markup as they came.
//
// Thread safety: a Document is a value; const calls may run concurrently.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "documents/markup_document.h"
#include "documents/segmenter.h"

namespace rpt::documents {

enum class TextFormat { kText, kHtml, kXml };

// "text", "html", "xml"; parse throws std::invalid_argument naming the choices.
TextFormat parse_text_format(std::string_view name);
const char* text_format_name(TextFormat format);

struct DocumentOptions {
  TextFormat format = TextFormat::kText;
  SegmentationOptions segmentation;
  std::vector<std::string> ignore_tags;  // HTML/XML: elements left untouched (MarkupOptions)
};

class Document {
 public:
  // Throws MarkupError for XML that is not well-formed or a markup limit exceeded.
  static Document parse(std::string_view text, const DocumentOptions& options);

  // The parts in order, each cut into segments. Mutable: a caller may cut a segment that is too
  // long for its model (cut_segment) or keep one as layout (keep_as_layout).
  std::vector<SegmentedText>& parts() { return parts_; }
  const std::vector<SegmentedText>& parts() const { return parts_; }
  std::size_t segments() const;

  struct Rendered {
    std::string text;
    int parts_kept_as_source = 0;  // markup: translations whose tags did not fit their unit
  };
  // The text with part i translated as part_translations[i] (the joined translation of its
  // segments); std::invalid_argument on a count that does not match.
  Rendered render(const std::vector<std::string>& part_translations) const;

 private:
  std::vector<SegmentedText> parts_;
  std::shared_ptr<const MarkupDocument> markup_;  // null: plain text, one part
};

}  // namespace rpt::documents
