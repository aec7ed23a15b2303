// MarkupDocument (markup_document.h): libxml2 parsing with its limits, and serialization.
// The units are found by markup_units.cc and written back by markup_apply.cc.
#include "documents/markup_document.h"

#include <libxml/HTMLparser.h>
#include <libxml/HTMLtree.h>
#include <libxml/parser.h>
#include <libxml/xmlsave.h>

#include <algorithm>
#include <climits>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "common/text_hygiene.h"
#include "documents/markup_fragment.h"
#include "documents/markup_units.h"
#include "spans/span_markup.h"

#include "documents/libxml_handles.h"
#include "documents/translation_count.h"

namespace rpt::documents {
namespace {

void init_libxml2_once() {
  static std::once_flag once;
  std::call_once(once, [] { xmlInitParser(); });
}

// Parser messages go nowhere: the parse's outcome is read from its context.
void discard_error(void*, xmlError*) {}

template <typename Context>
Context* check_allocated(Context* context) {
  if (context == nullptr) throw std::bad_alloc();
  context->sax->serror = discard_error;
  return context;
}

// HTML: lenient, repaired as browsers do (a document without them gets the implied <html> and
// <body>: libxml2 2.9's HTML_PARSE_NOIMPLIED nests sibling elements into each other); no
// invented doctype. Null for a source with no content at all.
libxml::DocPtr parse_html(std::string_view source) {
  libxml::HtmlContextPtr context(check_allocated(htmlNewParserCtxt()));
  // RECOVER: a script ends at its own end tag, not at the first "</" (libxml2's HTML 4 rule).
  constexpr int kOptions = HTML_PARSE_RECOVER | HTML_PARSE_NONET | HTML_PARSE_NOERROR |
                           HTML_PARSE_NOWARNING | HTML_PARSE_NODEFDTD | HTML_PARSE_IGNORE_ENC;
  return libxml::DocPtr(htmlCtxtReadMemory(
      context.get(), source.data(), static_cast<int>(source.size()), nullptr, "UTF-8", kOptions));
}

// The first error of the XML parse running on this thread (libxml2 goes on after it, and its
// last error is often only "Premature end of data").
struct FirstXmlError {
  bool seen = false;
  int code = 0;
  int line = 0;
  std::string message;
};
thread_local FirstXmlError* t_first_xml_error = nullptr;

void remember_first_error(void*, xmlError* error) {
  FirstXmlError* first = t_first_xml_error;
  if (first == nullptr || first->seen || error == nullptr || error->level < XML_ERR_ERROR) return;
  first->seen = true;
  first->code = error->code;
  first->line = error->line;
  try {  // nothing may be thrown through libxml2
    std::string_view message = error->message != nullptr ? error->message : "";
    while (message.ends_with('\n') || message.ends_with(' ')) message.remove_suffix(1);
    first->message = message;
  } catch (const std::bad_alloc&) {
    first->message = {};
  }
}

// XML: a well-formed document, or null and libxml2's message with its line. No network, no DTD
// loading, entities not substituted (a reference stays a reference; libxml2 also stops entity
// amplification), depth at most 256.
struct XmlParse {
  libxml::DocPtr doc;
  int error_code = 0;
  std::string error;  // "XML is not well-formed: line 3: ..."
};

XmlParse parse_xml(std::string_view source) {
  libxml::XmlContextPtr context(check_allocated(xmlNewParserCtxt()));
  context->sax->serror = remember_first_error;
  constexpr int kOptions =
      XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_IGNORE_ENC;
  FirstXmlError first;
  t_first_xml_error = &first;
  XmlParse parse;
  parse.doc.reset(xmlCtxtReadMemory(context.get(), source.data(), static_cast<int>(source.size()),
                                    nullptr, "UTF-8", kOptions));
  t_first_xml_error = nullptr;
  if (parse.doc != nullptr && context->wellFormed) return parse;
  parse.doc.reset();
  parse.error = "XML is not well-formed";
  if (!first.seen) {  // no error reported on the way: the parse's last one, if any
    t_first_xml_error = &first;
    const xmlError* last = xmlCtxtGetLastError(context.get());
    if (last != nullptr) remember_first_error(nullptr, const_cast<xmlError*>(last));
    t_first_xml_error = nullptr;
  }
  if (first.seen) {
    parse.error += ": line " + std::to_string(first.line) + ": " + first.message;
    parse.error_code = first.code;
  }
  return parse;
}

// A parsed source: a document, or a fragment with its blank edges kept aside.
struct Tree {
  libxml::DocPtr doc;  // HTML: null for a source with no content at all
  bool fragment = false;
  std::string_view leading;  // fragment: the blank edges, written back as they are
  std::string_view trailing;
};

Tree document_tree(libxml::DocPtr doc) { return {std::move(doc), false, {}, {}}; }
Tree fragment_tree(libxml::DocPtr doc, const markup::FragmentEdges& edges) {
  return {std::move(doc), true, edges.leading, edges.trailing};
}

// HTML: a fragment when it does not start as a document does (markup_fragment.h).
Tree parse_html_source(std::string_view source) {
  if (!markup::is_html_fragment(source)) return document_tree(parse_html(source));
  const markup::FragmentEdges edges = markup::fragment_edges(source, MarkupKind::kHtml);
  return fragment_tree(parse_html(markup::wrap_fragment(edges, MarkupKind::kHtml)), edges);
}

// XML: a well-formed document; else, where the document lacks a single root (no element, or
// content after the root) and declares no document type, a well-formed fragment; else
// MarkupError with the more telling of the two messages (the fragment's names the tag that does
// not match, unless it is about the container).
Tree parse_xml_source(std::string_view source) {
  XmlParse document = parse_xml(source);
  if (document.doc != nullptr) return document_tree(std::move(document.doc));
  const bool lacks_single_root =
      document.error_code == XML_ERR_DOCUMENT_EMPTY || document.error_code == XML_ERR_DOCUMENT_END;
  if (!lacks_single_root || !markup::may_be_xml_fragment(source)) {
    throw MarkupError(document.error);
  }
  const markup::FragmentEdges edges = markup::fragment_edges(source, MarkupKind::kXml);
  XmlParse fragment = parse_xml(markup::wrap_fragment(edges, MarkupKind::kXml));
  if (fragment.doc != nullptr) return fragment_tree(std::move(fragment.doc), edges);
  const bool about_container = fragment.error.find(markup::kFragmentContainer) != std::string::npos;
  throw MarkupError(about_container ? document.error : fragment.error);
}

Tree parse_tree(std::string_view source, const MarkupOptions& options) {
  init_libxml2_once();
  if (source.size() > options.max_bytes || source.size() > INT_MAX - 64) {
    throw MarkupError("markup larger than " + std::to_string(options.max_bytes) + " bytes");
  }
  if (!is_valid_utf8(source)) throw MarkupError("markup is not valid UTF-8");
  return options.kind == MarkupKind::kHtml ? parse_html_source(source) : parse_xml_source(source);
}

// Each '&' that starts no entity or character reference ("Tom & Jerry") escaped as "&amp;": text,
// as DeepL's tag handling reads it, where libxml2 refuses the source (only then: a well-formed
// source's CDATA and comments stay as they are). It comes back escaped, as a '<' read as text
// does from DeepL.
std::string escape_bare_ampersands(std::string_view source) {
  std::string escaped;
  escaped.reserve(source.size());
  for (std::size_t i = 0; i < source.size(); ++i) {
    escaped.push_back(source[i]);
    if (source[i] == '&' && spans::match_entity(source, i).length == 0) escaped.append("amp;");
  }
  return escaped;
}

bool has_xml_declaration(std::string_view source) {
  if (source.starts_with("\xEF\xBB\xBF")) source.remove_prefix(3);
  return source.starts_with("<?xml") && source.size() > 5 &&
         (source[5] == ' ' || source[5] == '\t' || source[5] == '\r' || source[5] == '\n');
}

// While alive, the URL attributes under `roots` (href, src, action, name) come out of libxml2's
// HTML writer as they are: it percent-escapes them ("a b.html" as "a%20b.html") unless the
// attribute has a namespace, so each gets one without a prefix (which the writer does not print)
// until the guard is gone.
class UrlAttributesVerbatim {
 public:
  explicit UrlAttributesVerbatim(const std::vector<xmlNode*>& roots)
      : namespace_(
            xmlNewNs(nullptr, reinterpret_cast<const xmlChar*>("urn:rpt:verbatim"), nullptr)) {
    if (namespace_ == nullptr) throw std::bad_alloc();
    std::vector<xmlNode*> stack(roots.rbegin(), roots.rend());
    while (!stack.empty()) {
      xmlNode* node = stack.back();
      stack.pop_back();
      if (node == nullptr || node->type != XML_ELEMENT_NODE) continue;
      for (xmlAttr* attribute = node->properties; attribute; attribute = attribute->next) {
        if (attribute->ns == nullptr && is_url_attribute(attribute->name)) {
          attribute->ns = namespace_;
          marked_.push_back(attribute);
        }
      }
      for (xmlNode* child = node->last; child; child = child->prev) stack.push_back(child);
    }
  }
  ~UrlAttributesVerbatim() {
    for (xmlAttr* attribute : marked_) attribute->ns = nullptr;
    xmlFreeNs(namespace_);
  }
  UrlAttributesVerbatim(const UrlAttributesVerbatim&) = delete;
  UrlAttributesVerbatim& operator=(const UrlAttributesVerbatim&) = delete;

 private:
  static bool is_url_attribute(const xmlChar* name) {
    const std::string_view text(reinterpret_cast<const char*>(name));
    return spans::same_name(text, "href") || spans::same_name(text, "src") ||
           spans::same_name(text, "action") || spans::same_name(text, "name");
  }

  xmlNs* namespace_;
  std::vector<xmlAttr*> marked_;
};

// HTML5's <meta charset="...">, which libxml2 2.9's htmlGetMetaEncoding and
// htmlSetMetaEncoding do not read (they know http-equiv="Content-Type" only), set to UTF-8
// wherever it declares another: the writer writes UTF-8 bytes whatever the page declares, and a
// browser would read them in the declared charset. Iterative: the tree is as deep as the page.
void declare_utf8_meta_charsets(xmlDoc* doc) {
  xmlNode* node = xmlDocGetRootElement(doc);
  while (node != nullptr) {
    if (node->type == XML_ELEMENT_NODE &&
        spans::same_name(reinterpret_cast<const char*>(node->name), "meta")) {
      for (xmlAttr* attribute = node->properties; attribute != nullptr;
           attribute = attribute->next) {
        if (!spans::same_name(reinterpret_cast<const char*>(attribute->name), "charset")) continue;
        const libxml::StringPtr value(xmlNodeGetContent(reinterpret_cast<xmlNode*>(attribute)));
        if (value == nullptr ||
            !spans::same_name(reinterpret_cast<const char*>(value.get()), "utf-8")) {
          xmlSetProp(node, attribute->name, reinterpret_cast<const xmlChar*>("UTF-8"));
        }
      }
    }
    if (node->type == XML_ELEMENT_NODE && node->children != nullptr) {
      node = node->children;
      continue;
    }
    // The next node in document order: a sibling, else an ancestor's, up to the root element.
    while (node != nullptr && node->next == nullptr) {
      node = node->parent != nullptr && node->parent->type == XML_ELEMENT_NODE ? node->parent
                                                                               : nullptr;
    }
    if (node != nullptr) node = node->next;
  }
}

// True when the language tags `a` and `b` ("de-DE", "de_AT", "DE") share their language.
bool same_language(std::string_view a, std::string_view b) {
  return spans::same_name(a.substr(0, a.find_first_of("-_")), b.substr(0, b.find_first_of("-_")));
}

// A whole document's root `lang` (HTML) and `xml:lang` that name another language than the
// translation's, set to it: browsers, screen readers, hyphenation and spell checkers read a page
// in the language it declares (a page from en to de still said lang="en"). Elements inside keep
// theirs: a quotation in another language stays one. None is added where the root has none.
void declare_language(xmlDoc* doc, MarkupKind kind, const std::string& language) {
  xmlNode* root = xmlDocGetRootElement(doc);
  if (language.empty() || root == nullptr) return;
  std::string tag = language;  // BCP 47 writes a region after '-': pt_BR -> pt-BR
  std::replace(tag.begin(), tag.end(), '_', '-');
  const auto* value = reinterpret_cast<const xmlChar*>(tag.c_str());
  const auto differs = [&language](const libxml::StringPtr& declared) {
    return declared != nullptr &&
           !same_language(reinterpret_cast<const char*>(declared.get()), language);
  };
  if (kind == MarkupKind::kHtml) {  // the HTML parser keeps xml:lang as a plain name
    for (const char* name : {"lang", "xml:lang"}) {
      xmlAttr* attribute = xmlHasNsProp(root, reinterpret_cast<const xmlChar*>(name), nullptr);
      if (attribute != nullptr &&
          differs(libxml::StringPtr(xmlNodeGetContent(reinterpret_cast<xmlNode*>(attribute))))) {
        xmlNodeSetContent(reinterpret_cast<xmlNode*>(attribute), value);
      }
    }
  } else if (differs(libxml::StringPtr(xmlGetNsProp(root, reinterpret_cast<const xmlChar*>("lang"),
                                                    XML_XML_NAMESPACE)))) {
    xmlNodeSetLang(root, value);
  }
}

// UTF-8, as the tree is (format off: no whitespace added). A <meta> that declares another
// charset (http-equiv="Content-Type" or HTML5's charset attribute) is changed to declare UTF-8;
// none is added where the source has none.
std::string serialize_html(xmlDoc* doc) {
  const xmlChar* declared = htmlGetMetaEncoding(doc);
  if (declared != nullptr && !spans::same_name(reinterpret_cast<const char*>(declared), "utf-8")) {
    htmlSetMetaEncoding(doc, reinterpret_cast<const xmlChar*>("UTF-8"));
  }
  declare_utf8_meta_charsets(doc);
  libxml::OutputPtr output(xmlAllocOutputBuffer(nullptr));
  if (output == nullptr) throw std::bad_alloc();
  const UrlAttributesVerbatim verbatim({xmlDocGetRootElement(doc)});
  htmlDocContentDumpFormatOutput(output.get(), doc, "UTF-8", 0);
  const xmlChar* content = xmlOutputBufferGetContent(output.get());
  return std::string(reinterpret_cast<const char*>(content), xmlOutputBufferGetSize(output.get()));
}

// UTF-8, declared as such when the source has an XML declaration; none added otherwise.
std::string serialize_xml(xmlDoc* doc, bool declaration) {
  libxml::BufferPtr buffer(xmlBufferCreate());
  if (buffer == nullptr) throw std::bad_alloc();
  xmlSaveCtxt* save = xmlSaveToBuffer(buffer.get(), "UTF-8", declaration ? 0 : XML_SAVE_NO_DECL);
  if (save == nullptr) throw std::bad_alloc();
  xmlSaveDoc(save, doc);
  if (xmlSaveClose(save) < 0) throw MarkupError("cannot write the XML document");
  return std::string(reinterpret_cast<const char*>(xmlBufferContent(buffer.get())),
                     static_cast<std::size_t>(xmlBufferLength(buffer.get())));
}

// A fragment: its edges as they came around the serialization of its nodes (HTML as
// serialize_html writes them, XML as serialize_xml does; no <meta> charset change, no
// declaration).
std::string serialize_fragment(xmlDoc* doc, MarkupKind kind, std::string_view leading,
                               std::string_view trailing) {
  std::string text(leading);
  const std::vector<xmlNode*> nodes = markup::fragment_nodes(doc);
  if (kind == MarkupKind::kHtml) {
    libxml::OutputPtr output(xmlAllocOutputBuffer(nullptr));
    if (output == nullptr) throw std::bad_alloc();
    const UrlAttributesVerbatim verbatim(nodes);
    for (xmlNode* node : nodes) htmlNodeDumpFormatOutput(output.get(), doc, node, "UTF-8", 0);
    text.append(reinterpret_cast<const char*>(xmlOutputBufferGetContent(output.get())),
                xmlOutputBufferGetSize(output.get()));
  } else {
    libxml::BufferPtr buffer(xmlBufferCreate());
    if (buffer == nullptr) throw std::bad_alloc();
    xmlSaveCtxt* save = xmlSaveToBuffer(buffer.get(), "UTF-8", XML_SAVE_NO_DECL);
    if (save == nullptr) throw std::bad_alloc();
    for (xmlNode* node : nodes) xmlSaveTree(save, node);
    if (xmlSaveClose(save) < 0) throw MarkupError("cannot write the XML fragment");
    text.append(reinterpret_cast<const char*>(xmlBufferContent(buffer.get())),
                static_cast<std::size_t>(xmlBufferLength(buffer.get())));
  }
  text.append(trailing);
  return text;
}

// The ASCII whitespace a text ends with (XML's and HTML's blanks).
std::string_view blank_tail(std::string_view text) {
  const std::size_t last = text.find_last_not_of(" \t\r\n\f");
  return text.substr(last == std::string_view::npos ? 0 : last + 1);
}

// A whole document's serialization ending as its source did: libxml2's writers end with a line
// break the source may not have, and drop the blanks after the root element it may have.
std::string with_source_ending(std::string serialized, std::string_view source) {
  serialized.resize(serialized.size() - blank_tail(serialized).size());
  serialized.append(blank_tail(source));
  return serialized;
}

}  // namespace

MarkupDocument::MarkupDocument(std::string source, MarkupOptions options,
                               std::vector<std::string> units,
                               std::vector<bool> line_breaks_are_spaces, bool fragment)
    : source_(std::move(source)),
      options_(std::move(options)),
      units_(std::move(units)),
      line_breaks_are_spaces_(std::move(line_breaks_are_spaces)),
      fragment_(fragment) {}

bool is_well_formed_xml(std::string_view source, const MarkupOptions& options) {
  MarkupOptions xml = options;
  xml.kind = MarkupKind::kXml;
  try {
    parse_tree(source, xml);
    return true;
  } catch (const MarkupError&) {
    return false;
  }
}

MarkupDocument MarkupDocument::parse(std::string_view sent, const MarkupOptions& options) {
  std::string source(sent);
  Tree tree;
  try {
    tree = parse_tree(source, options);
  } catch (const MarkupError&) {
    std::string escaped = escape_bare_ampersands(source);
    if (options.kind != MarkupKind::kXml || escaped == source) throw;
    source = std::move(escaped);
    tree = parse_tree(source, options);
  }
  std::vector<std::string> units;
  std::vector<bool> line_breaks_are_spaces;
  if (tree.doc != nullptr) {
    for (markup::UnitSlot& slot : markup::find_units(tree.doc.get(), options)) {
      units.push_back(std::move(slot.text));
      line_breaks_are_spaces.push_back(slot.line_breaks_are_spaces);
    }
  }
  const bool fragment = tree.fragment;
  return MarkupDocument(std::move(source), options, std::move(units),
                        std::move(line_breaks_are_spaces), fragment);
}

MarkupDocument::Rendered MarkupDocument::render(
    const std::vector<std::string>& translations) const {
  require_translation_count("render", translations.size(), units_.size(), "units");
  const Tree tree = parse_tree(source_, options_);
  xmlDoc* const doc = tree.doc.get();
  if (doc == nullptr || doc->children == nullptr) return {source_, 0};  // nothing but blanks
  const std::vector<markup::UnitSlot> slots = markup::find_units(doc, options_);
  if (slots.size() != units_.size()) throw MarkupError("render: the source parsed differently");
  Rendered rendered;
  for (std::size_t i = 0; i < slots.size(); ++i) {
    if (!markup::apply_translation(slots[i], translations[i], options_.kind)) {
      ++rendered.units_kept_as_source;
    }
  }
  if (tree.fragment) {
    rendered.text = serialize_fragment(doc, options_.kind, tree.leading, tree.trailing);
  } else {
    declare_language(doc, options_.kind, options_.target_language);
    rendered.text = with_source_ending(options_.kind == MarkupKind::kHtml
                                           ? serialize_html(doc)
                                           : serialize_xml(doc, has_xml_declaration(source_)),
                                       source_);
  }
  return rendered;
}

}  // namespace rpt::documents
