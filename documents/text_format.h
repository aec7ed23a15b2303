// What a text is: plain text, a Markdown document, an HTML or XML document (or fragment), or a
// localization file
// (gettext PO/POT, XLIFF, JSON) whose missing translations are filled in.
#pragma once

#include <string_view>

namespace rpt::documents {

enum class TextFormat { kText, kHtml, kXml, kPo, kXliff, kJson, kMarkdown };

// "text", "html", "xml", "po" (also "pot"), "xliff" (also "xlf"), "json" (also "arb"),
// "markdown" (also "md": plain text whose indented code blocks are code too); parse throws
// std::invalid_argument naming the choices.
TextFormat parse_text_format(std::string_view name);
const char* text_format_name(TextFormat format);

inline bool is_catalog_format(TextFormat format) {
  return format == TextFormat::kPo || format == TextFormat::kXliff || format == TextFormat::kJson;
}

}  // namespace rpt::documents
