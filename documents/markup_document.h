// HTML and XML documents translated with their tree kept (docs/documents_markup.md).
//
// parse() cuts a document into text units: the inline content of each block (HTML) or of each
// element with text of its own (XML), and the translatable attribute values (HTML: title, alt,
// placeholder, aria-label, the value of button inputs). A unit is markup text: inline elements
// are tags the span recognizer protects ("Click <b>here</b>."), untouched content (script,
// code, translate="no", ...) is a placeholder <x id="N"/>, text is escaped (&amp; &lt; &gt;).
// render() writes the document back, UTF-8, with each unit replaced by its translation; only
// text and translatable attribute values change. A translation whose tags do not fit its unit
// keeps that unit's source. libxml2 parses (HTML leniently, XML strictly, no network, no
// entity expansion); parsing is bounded by size, depth and unit count.
//
// A fragment (an element's innerHTML, an API's "Hello <b>x</b>") comes back as a fragment:
// HTML that does not start, after a byte order mark, whitespace, comments and processing
// instructions, with <!DOCTYPE, <html, <head or <body, and XML without a single root element (no
// element, or siblings: "Hello <b>x</b>", "<a/><b/>") and without a DOCTYPE. render() then writes
// only the fragment's content, nothing added around it (no <html>, <body>, implied <p>, XML
// declaration or trailing newline), its blank edges byte for byte.
//
// Thread safety: parse() may run on several threads at once. A MarkupDocument holds no libxml2
// state (render() parses its source again), so const calls on one document may run concurrently.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace rpt::documents {

enum class MarkupKind { kHtml, kXml };

struct MarkupOptions {
  MarkupKind kind = MarkupKind::kHtml;
  // Element names whose content is left untouched, in addition to the defaults (HTML: script,
  // style, code, pre, textarea, kbd, samp, svg, math, template; XML: none). HTML names match in
  // any case; XML names match the qualified ("its:rules") or the local name exactly.
  std::vector<std::string> ignore_tags;
  std::size_t max_bytes = 8 << 20;  // a larger source: MarkupError
  int max_depth = 256;              // deeper element nesting: MarkupError
  std::size_t max_units = 100000;   // more units: MarkupError
};

// Malformed XML (libxml2's message with its line; an XML fragment's lines are the source's), a
// limit exceeded, input not UTF-8.
class MarkupError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class MarkupDocument {
 public:
  // Throws MarkupError. HTML is never malformed: libxml2 repairs it as browsers do.
  static MarkupDocument parse(std::string_view source, const MarkupOptions& options);

  // The text units, in document order (an element's attribute units after its content's).
  const std::vector<std::string>& units() const { return units_; }

  // True when the source is a fragment, rendered as one (see above).
  bool is_fragment() const { return fragment_; }

  struct Rendered {
    std::string text;              // the document, UTF-8
    int units_kept_as_source = 0;  // translations whose tags did not fit their unit
  };
  // translations[i] replaces units()[i]; translations.size() must equal units().size()
  // (std::invalid_argument otherwise). Rendering the units themselves gives the source's tree.
  Rendered render(const std::vector<std::string>& translations) const;

 private:
  MarkupDocument(std::string source, MarkupOptions options, std::vector<std::string> units,
                 bool fragment);

  std::string source_;
  MarkupOptions options_;
  std::vector<std::string> units_;
  bool fragment_ = false;
};

}  // namespace rpt::documents
