// Owning handles of libxml2's objects (RAII), for the documents/ code that parses and writes
// markup (markup_document.cc, xliff_catalog.cc).
#pragma once

#include <libxml/HTMLparser.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlIO.h>

#include <memory>

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

}  // namespace rpt::documents::libxml
