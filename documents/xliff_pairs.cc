#include "documents/xliff_pairs.h"

#include <map>
#include <optional>

#include "documents/libxml_handles.h"

namespace rpt::documents::xliff {
namespace {

using libxml::attribute;
using libxml::view;

// +1 for a start, -1 for an end, with the pair's key; 0 for anything else.
struct Code {
  int step = 0;
  std::string key;
};

Code code_of(const xmlNode* node, bool version12) {
  const std::string_view name = view(node->name);
  if (version12) {
    // <bx/>/<ex/> are linked by rid; <bpt>/<ept> by rid, else by their shared id.
    const std::optional<std::string> rid = attribute(node, "rid");
    const std::optional<std::string> link = rid ? rid : attribute(node, "id");
    if ((name == "bx" || name == "ex") && rid) return {name == "bx" ? 1 : -1, "bx " + *rid};
    if ((name == "bpt" || name == "ept") && link) return {name == "bpt" ? 1 : -1, "bpt " + *link};
    // Angular's ng extract-i18n names an element's start and end placeholders so.
    const std::string id = attribute(node, "id").value_or("");
    if (name == "x" && id.starts_with("START_")) return {1, "x " + id.substr(6)};
    if (name == "x" && id.starts_with("CLOSE_")) return {-1, "x " + id.substr(6)};
    return {};
  }
  if (name == "sc" || name == "sm") {
    const std::optional<std::string> id = attribute(node, "id");
    if (id) return {1, std::string(name) + " " + *id};
  }
  if (name == "ec" || name == "em") {  // an isolated <ec/> has an id, no startRef: no pair here
    const std::optional<std::string> start = attribute(node, "startRef");
    if (start) return {-1, std::string(name == "ec" ? "sc" : "sm") + " " + *start};
  }
  return {};
}

void walk(const xmlNode* first, std::string_view ns, bool version12,
          std::map<std::string, int>* open, std::set<std::string>* misordered) {
  for (const xmlNode* node = first; node != nullptr; node = node->next) {
    if (node->type != XML_ELEMENT_NODE || node->ns == nullptr || view(node->ns->href) != ns) {
      continue;
    }
    const Code code = code_of(node, version12);
    if (code.step != 0 && ((*open)[code.key] += code.step) < 0) misordered->insert(code.key);
    const std::string_view name = view(node->name);
    if (name == "g" || name == "pc" || name == "mrk") {
      walk(node->children, ns, version12, open, misordered);
    }
  }
}

}  // namespace

std::set<std::string> misordered_pairs(const xmlNode* first, std::string_view ns, bool version12) {
  std::map<std::string, int> open;
  std::set<std::string> misordered;
  walk(first, ns, version12, &open, &misordered);
  return misordered;
}

}  // namespace rpt::documents::xliff
