// Owning handles of libxml2's objects (RAII), and the two reads every walk of a tree makes, for
// the documents/ code that parses and writes markup (markup_document.cc, markup_units.cc,
// xliff_catalog.cc, xliff_pairs.cc).
#pragma once

#include <libxml/HTMLparser.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlIO.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace rpt::documents::libxml {

struct FreeDoc {
  void operator()(xmlDoc* doc) const { xmlFreeDoc(doc); }
};
struct FreeHtmlContext {
  void operator()(htmlParserCtxt* context) const { htmlFreeParserCtxt(context); }
};
struct FreeXmlContext {
  void operator()(xmlParserCtxt* context) const { xmlFreeParserCtxt(context); }
};
struct CloseOutput {
  void operator()(xmlOutputBuffer* output) const { xmlOutputBufferClose(output); }
};
struct FreeBuffer {
  void operator()(xmlBuffer* buffer) const { xmlBufferFree(buffer); }
};
struct FreeNodeList {
  void operator()(xmlNode* nodes) const { xmlFreeNodeList(nodes); }
};
struct FreeString {
  void operator()(xmlChar* text) const { xmlFree(text); }
};

using DocPtr = std::unique_ptr<xmlDoc, FreeDoc>;
using HtmlContextPtr = std::unique_ptr<htmlParserCtxt, FreeHtmlContext>;
using XmlContextPtr = std::unique_ptr<xmlParserCtxt, FreeXmlContext>;
using OutputPtr = std::unique_ptr<xmlOutputBuffer, CloseOutput>;
using BufferPtr = std::unique_ptr<xmlBuffer, FreeBuffer>;
using NodeListPtr = std::unique_ptr<xmlNode, FreeNodeList>;
using StringPtr = std::unique_ptr<xmlChar, FreeString>;

// libxml2's UTF-8 text as a view; empty for none.
inline std::string_view view(const xmlChar* text) {
  return text == nullptr ? std::string_view() : reinterpret_cast<const char*>(text);
}

// An attribute without a namespace; nullopt when absent.
inline std::optional<std::string> attribute(const xmlNode* element, const char* name) {
  const StringPtr value(xmlGetNoNsProp(element, reinterpret_cast<const xmlChar*>(name)));
  if (value == nullptr) return std::nullopt;
  return std::string(view(value.get()));
}

}  // namespace rpt::documents::libxml
