#include "documents/text_format.h"

#include "documents/segmenter.h"

#include <stdexcept>
#include <string>

namespace rpt::documents {

TextFormat parse_text_format(std::string_view name) {
  if (name == "text") return TextFormat::kText;
  if (name == "html") return TextFormat::kHtml;
  if (name == "xml") return TextFormat::kXml;
  if (name == "po" || name == "pot") return TextFormat::kPo;
  if (name == "xliff" || name == "xlf") return TextFormat::kXliff;
  if (name == "json" || name == "arb") return TextFormat::kJson;
  if (name == "markdown" || name == "md") return TextFormat::kMarkdown;
  throw std::invalid_argument("format is '" + std::string(name) +
                              "'; it must be text, html, xml, po, xliff, json or markdown");
}

const char* text_format_name(TextFormat format) {
  switch (format) {
    case TextFormat::kText:
      return "text";
    case TextFormat::kHtml:
      return "html";
    case TextFormat::kXml:
      return "xml";
    case TextFormat::kPo:
      return "po";
    case TextFormat::kXliff:
      return "xliff";
    case TextFormat::kJson:
      return "json";
    case TextFormat::kMarkdown:
      return "markdown";
  }
  return "text";
}

SplitSentences parse_split_sentences(std::string_view name) {
  if (name == "auto") return SplitSentences::kAuto;
  if (name == "newlines") return SplitSentences::kNewlines;
  if (name == "sentences") return SplitSentences::kSentences;
  if (name == "none") return SplitSentences::kNone;
  throw std::invalid_argument("split_sentences is '" + std::string(name) +
                              "'; it must be auto, newlines, sentences or none");
}

const char* split_sentences_name(SplitSentences split) {
  switch (split) {
    case SplitSentences::kAuto:
      return "auto";
    case SplitSentences::kNewlines:
      return "newlines";
    case SplitSentences::kSentences:
      return "sentences";
    case SplitSentences::kNone:
      return "none";
  }
  return "auto";
}

}  // namespace rpt::documents
