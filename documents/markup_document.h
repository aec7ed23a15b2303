// HTML and XML documents translated with their tree kept (docs/documents-markup.md: what a unit
// is, what is left untouched, fragments, limits). parse() cuts a document into text units (the
// inline content of each block or text-holding element, translatable attribute values), each
// markup text whose inline elements are protected tags and untouched content a placeholder
// <x id="N"/>. render() writes it back, UTF-8, only text and translatable attribute values
// changed; a translation whose tags do not fit keeps its unit's source; a fragment comes back as
// a fragment, nothing added around it. parse() may run on several threads at once; const calls
// on one document may run concurrently (it holds no libxml2 state).
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
  // The translation's language ("de", "pt-BR"): a whole document's root element that declares
  // another one (HTML lang, xml:lang) is set to it when rendered. Empty: untouched.
  std::string target_language;
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

// Whether `source` is XML as MarkupDocument::parse reads it (a well-formed document or fragment,
// within `options`' limits) as it stands: parse() reads a '&' that starts no entity as text,
// this does not (DeepL's tag handling v2 refuses such XML).
bool is_well_formed_xml(std::string_view source, const MarkupOptions& options = {});

class MarkupDocument {
 public:
  // Throws MarkupError. HTML is never malformed: libxml2 repairs it as browsers do.
  static MarkupDocument parse(std::string_view source, const MarkupOptions& options);

  // The text units, in document order (an element's attribute units after its content's).
  const std::vector<std::string>& units() const { return units_; }
  // Whether a line break in units()[i] is a space where the source wraps a paragraph (HTML,
  // attribute values, XML but under xml:space="preserve" and in verbatim elements: DocBook's
  // programlisting, screen, literallayout, synopsis, address; DITA's codeblock, lines, msgblock;
  // Mallard's code and screen; pre). Where it is not, a line break ends a segment.
  bool line_breaks_are_spaces(std::size_t i) const { return line_breaks_are_spaces_[i]; }

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
                 std::vector<bool> line_breaks_are_spaces, bool fragment);

  std::string source_;
  MarkupOptions options_;
  std::vector<std::string> units_;
  std::vector<bool> line_breaks_are_spaces_;  // per unit
  bool fragment_ = false;
};

}  // namespace rpt::documents
