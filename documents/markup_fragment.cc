// HTML and XML fragments (markup_fragment.h): which sources are fragments, their edges, the
// container they are parsed in, and the nodes they parsed into.
#include "documents/markup_fragment.h"

#include <string>
#include <string_view>
#include <vector>

#include "spans/span_markup.h"

namespace rpt::documents::markup {
namespace {

constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";

bool is_space(char c, MarkupKind kind) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' ||
         (kind == MarkupKind::kHtml && c == '\f');
}

std::string_view skip_space(std::string_view text, MarkupKind kind) {
  while (!text.empty() && is_space(text.front(), kind)) text.remove_prefix(1);
  return text;
}

// `text` after its byte order mark, whitespace, comments and processing instructions; empty
// when a comment or instruction is not closed.
std::string_view skip_prolog_misc(std::string_view text, MarkupKind kind) {
  if (text.starts_with(kByteOrderMark)) text.remove_prefix(kByteOrderMark.size());
  for (;;) {
    text = skip_space(text, kind);
    std::string_view end_mark;
    if (text.starts_with("<!--")) {
      end_mark = "-->";
    } else if (text.starts_with("<?")) {
      end_mark = kind == MarkupKind::kHtml ? ">" : "?>";
    } else {
      return text;
    }
    const std::size_t end = text.find(end_mark, 2);
    if (end == std::string_view::npos) return {};
    text.remove_prefix(end + end_mark.size());
  }
}

// "<name" followed by the end of the text, whitespace, '>' or '/' (so "<header>" is no "<head").
bool starts_with_tag(std::string_view text, std::string_view name) {
  if (text.size() < name.size() + 1 || text[0] != '<') return false;
  if (!spans::same_name(text.substr(1, name.size()), name)) return false;
  if (text.size() == name.size() + 1) return true;
  const char next = text[name.size() + 1];
  return is_space(next, MarkupKind::kHtml) || next == '>' || next == '/';
}

xmlNode* find_container(xmlNode* first) {
  for (xmlNode* node = first; node != nullptr; node = node->next) {
    if (node->type != XML_ELEMENT_NODE) continue;
    const std::string_view name = reinterpret_cast<const char*>(node->name);
    if (name == kFragmentContainer) return node;
    if (name == "html" || name == "body") return find_container(node->children);
    return nullptr;
  }
  return nullptr;
}

// `node`, or for an <html>, <head> or <body> (elements libxml2 implies: in a fragment it drops
// those start tags) its content.
void append_unwrapped(xmlNode* node, std::vector<xmlNode*>* nodes) {
  const std::string_view name =
      node->type == XML_ELEMENT_NODE ? reinterpret_cast<const char*>(node->name) : "";
  if (name != "html" && name != "head" && name != "body") {
    nodes->push_back(node);
    return;
  }
  for (xmlNode* child = node->children; child != nullptr; child = child->next) {
    append_unwrapped(child, nodes);
  }
}

}  // namespace

bool is_html_fragment(std::string_view source) {
  const std::string_view start = skip_prolog_misc(source, MarkupKind::kHtml);
  return !(spans::same_name(start.substr(0, 9), "<!doctype") || starts_with_tag(start, "html") ||
           starts_with_tag(start, "head") || starts_with_tag(start, "body"));
}

bool may_be_xml_fragment(std::string_view source) {
  return !skip_prolog_misc(source, MarkupKind::kXml).starts_with("<!DOCTYPE");
}

FragmentEdges fragment_edges(std::string_view source, MarkupKind kind) {
  std::size_t begin = source.starts_with(kByteOrderMark) ? kByteOrderMark.size() : 0;
  while (begin < source.size() && is_space(source[begin], kind)) ++begin;
  std::size_t end = source.size();
  while (end > begin && is_space(source[end - 1], kind)) --end;
  return {source.substr(0, begin), source.substr(begin, end - begin), source.substr(end)};
}

std::string wrap_fragment(const FragmentEdges& edges, MarkupKind kind) {
  std::string wrapped;
  if (kind == MarkupKind::kHtml) {
    wrapped.append("<html><body><").append(kFragmentContainer).append(">").append(edges.content);
    return wrapped;
  }
  std::string_view leading_space = edges.leading;
  if (leading_space.starts_with(kByteOrderMark)) leading_space.remove_prefix(kByteOrderMark.size());
  wrapped.append("<").append(kFragmentContainer).append(leading_space).append(">");
  wrapped.append(edges.content).append("</").append(kFragmentContainer).append(">");
  return wrapped;
}

std::vector<xmlNode*> fragment_nodes(xmlDoc* doc) {
  std::vector<xmlNode*> nodes;
  xmlNode* const container = find_container(doc->children);
  if (container == nullptr) return nodes;
  for (xmlNode* child = container->children; child != nullptr; child = child->next) {
    append_unwrapped(child, &nodes);
  }
  for (xmlNode* outer = container; outer != nullptr && outer->type != XML_DOCUMENT_NODE &&
                                   outer->type != XML_HTML_DOCUMENT_NODE;
       outer = outer->parent) {
    for (xmlNode* after = outer->next; after != nullptr; after = after->next) {
      append_unwrapped(after, &nodes);
    }
  }
  return nodes;
}

}  // namespace rpt::documents::markup
