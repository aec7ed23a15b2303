// Internal to markup_document.cc: HTML and XML fragments (markup_document.h). A fragment is
// markup that is not a whole document: "Hello <b>x</b>", an element's innerHTML, XML siblings
// without a single root. Its blank edges are kept aside byte for byte, the rest is parsed inside
// a synthetic container element (<rpt-fragment>: HTML inside <html><body>, XML as the root), and
// it is written back as the container's content only (why: docs/documents-markup.md "Fragments").
#pragma once

#include <libxml/tree.h>

#include <string>
#include <string_view>
#include <vector>

#include "documents/markup_document.h"

namespace rpt::documents::markup {

// The container's name: a custom element (HTML: a block no start tag closes implicitly).
inline constexpr std::string_view kFragmentContainer = "rpt-fragment";

// True unless `source` starts, after a byte order mark, whitespace, comments and processing
// instructions, with <!DOCTYPE, <html, <head or <body (ASCII case-insensitive).
bool is_html_fragment(std::string_view source);

// True when an XML source that is not a well-formed document may be a fragment: it has no
// document type declaration before its first element.
bool may_be_xml_fragment(std::string_view source);

// A fragment cut into its blank edges (a byte order mark and whitespace; XML: XML whitespace
// only) and the content between them.
struct FragmentEdges {
  std::string_view leading;
  std::string_view content;
  std::string_view trailing;
};
FragmentEdges fragment_edges(std::string_view source, MarkupKind kind);

// The fragment's content inside the container, ready for libxml2. XML: the leading edge's
// whitespace goes inside the container's start tag, so that libxml2's error lines are the
// source's.
std::string wrap_fragment(const FragmentEdges& edges, MarkupKind kind);

// The nodes a fragment parsed into, in order: the container's children, then anything the parse
// put after the container (HTML: content after a stray </rpt-fragment>, </body> or </html>),
// so that no content is lost; an <html>, <head> or <body> there (implied by libxml2) is replaced
// by its content. Empty when the tree holds no container.
std::vector<xmlNode*> fragment_nodes(xmlDoc* doc);

}  // namespace rpt::documents::markup
