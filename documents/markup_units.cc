// The text units of a libxml2 tree (markup_units.h): which content is a unit, which is inline,
// which is left untouched. The rules are in docs/documents-markup.md.
#include <unicode/uchar.h>

#include <algorithm>
#include <iterator>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>

#include "common/text_hygiene.h"
#include "documents/libxml_handles.h"
#include "documents/markup_units.h"
#include "spans/span_markup.h"

namespace rpt::documents::markup {
namespace {

// HTML phrasing elements that stay inside their block's unit as tags. Every other element
// (p, li, td, div, h1, label, button, option, title, unknown and custom elements) is a block:
// its inline content is a unit of its own.
constexpr std::string_view kHtmlInline[] = {
    "a",    "abbr", "acronym",  "b",     "bdi",  "bdo",    "big",    "br",    "cite",
    "code", "data", "del",      "dfn",   "em",   "font",   "i",      "img",   "input",
    "ins",  "kbd",  "mark",     "math",  "nobr", "q",      "rp",     "rt",    "ruby",
    "s",    "samp", "script",   "small", "span", "strike", "strong", "style", "sub",
    "sup",  "svg",  "textarea", "time",  "tt",   "u",      "var",    "wbr"};
static_assert(std::is_sorted(std::begin(kHtmlInline), std::end(kHtmlInline)));

// HTML elements whose content is never translated: code (variables and typewriter text too:
// a manual's parameter names), program input and output, form values, and content that is not
// prose.
constexpr std::string_view kHtmlIgnored[] = {"code",     "kbd",      "math",  "pre",
                                             "samp",     "script",   "style", "svg",
                                             "template", "textarea", "tt",    "var"};

constexpr std::string_view kHtmlTranslatableAttributes[] = {"alt", "aria-label", "placeholder",
                                                            "title"};

using libxml::view;

bool is_html_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

bool has_letter_or_digit(std::string_view text) {
  char32_t code = 0;
  for (std::size_t i = 0; i < text.size();) {
    if (!next_code_point(text, &i, &code)) {
      ++i;
      continue;
    }
    if (u_isalnum(static_cast<UChar32>(code))) return true;
  }
  return false;
}

bool is_blank(std::string_view text) {
  return std::all_of(text.begin(), text.end(), is_html_space);
}

std::string qualified_name(const xmlNode* node) {
  std::string name;
  if (node->ns != nullptr && node->ns->prefix != nullptr) {
    name = view(node->ns->prefix);
    name += ':';
  }
  name += view(node->name);
  return name;
}

// An attribute's value as the tree holds it: text, with XML entity references as "&name;".
std::string attribute_value(const xmlAttr* attribute) {
  std::string value;
  for (const xmlNode* part = attribute->children; part != nullptr; part = part->next) {
    if (part->type == XML_ENTITY_REF_NODE) {
      value.append("&").append(view(part->name)).append(";");
    } else {
      value += view(part->content);
    }
  }
  return value;
}

// XML elements whose line breaks are the text's own, whatever xml:space says: DocBook's, DITA's,
// Mallard's and XHTML's verbatim and line-by-line elements.
constexpr std::string_view kXmlVerbatim[] = {
    "address",       "classsynopsisinfo", "code", "codeblock",      "funcsynopsisinfo", "lines",
    "literallayout", "msgblock",          "pre",  "programlisting", "screen",           "synopsis"};
static_assert(std::is_sorted(std::begin(kXmlVerbatim), std::end(kXmlVerbatim)));

bool contains(const std::string_view* begin, const std::string_view* end, std::string_view name) {
  return std::find(begin, end, name) != end;
}

class UnitFinder {
 public:
  explicit UnitFinder(const MarkupOptions& options)
      : options_(options), html_(options.kind == MarkupKind::kHtml) {}

  std::vector<UnitSlot> find(xmlDoc* doc) {
    check_depth_and_find_blocks(doc);
    xmlNode* root = reinterpret_cast<xmlNode*>(doc);
    if (html_) {
      visit_html_container(root, 0);
    } else {
      for (xmlNode* child = root->children; child != nullptr; child = child->next) {
        if (child->type == XML_ELEMENT_NODE) visit_xml_element(child, 1);
      }
    }
    return std::move(units_);
  }

 private:
  bool is_ignored(const xmlNode* element) const {
    const std::string_view name = view(element->name);
    if (html_ && contains(std::begin(kHtmlIgnored), std::end(kHtmlIgnored), name)) return true;
    for (const std::string& ignored : options_.ignore_tags) {
      if (html_ ? spans::same_name(ignored, name)
                : (ignored == name || ignored == qualified_name(element))) {
        return true;
      }
    }
    for (const xmlAttr* a = element->properties; a != nullptr; a = a->next) {
      const std::string_view attribute = view(a->name);
      if (spans::same_name(attribute, "translate")) {
        std::string value = attribute_value(a);
        if (spans::same_name(value, "no")) return true;
      } else if (!html_ && attribute == "mtype" && view(element->name) == "mrk") {
        // XLIFF 1.2 says translate="no" of inline text so: <mrk mtype="protected">.
        if (attribute_value(a) == "protected") return true;
      } else if (html_ && spans::same_name(attribute, "class")) {
        const std::string value = attribute_value(a);
        for (std::size_t at = value.find("notranslate"); at != std::string::npos;
             at = value.find("notranslate", at + 1)) {
          const std::size_t end = at + std::string_view("notranslate").size();
          if ((at == 0 || is_html_space(value[at - 1])) &&
              (end == value.size() || is_html_space(value[end]))) {
            return true;
          }
        }
      }
    }
    return false;
  }

  static bool is_html_inline(const xmlNode* element) {
    return std::binary_search(std::begin(kHtmlInline), std::end(kHtmlInline), view(element->name));
  }

  // One pass over the whole tree without recursion: fails past max_depth before any recursive
  // step runs, and (HTML) finds the elements that end a run of inline content: blocks, and
  // inline elements that hold a block (<a><div>...</div></a>), which are containers instead.
  void check_depth_and_find_blocks(xmlDoc* doc) {
    xmlNode* const root = reinterpret_cast<xmlNode*>(doc);
    std::unordered_set<const xmlNode*> holds_block;
    xmlNode* node = root->children;
    int depth = 1;
    while (node != nullptr) {
      if (depth > options_.max_depth) {
        throw MarkupError("markup nests deeper than " + std::to_string(options_.max_depth) +
                          " elements");
      }
      if (node->type == XML_ELEMENT_NODE && node->children != nullptr) {
        node = node->children;
        ++depth;
        continue;
      }
      while (node != nullptr) {  // node and its subtree are done
        if (html_ && node->type == XML_ELEMENT_NODE &&
            (!is_html_inline(node) || (holds_block.count(node) != 0 && !is_ignored(node)))) {
          blocks_.insert(node);
          holds_block.insert(node->parent);
        }
        if (node->next != nullptr) {
          node = node->next;
          break;
        }
        node = node->parent == root ? nullptr : node->parent;
        --depth;
      }
    }
  }

  // A <br> directly in a block: a line break, which ends a unit as a block does (the element
  // stays where it is, outside both units). One inside an inline element stays one of its tags.
  bool is_line_break(const xmlNode* node) const {
    return html_ && node->type == XML_ELEMENT_NODE && spans::same_name(view(node->name), "br");
  }

  bool in_run(const xmlNode* node) const {
    switch (node->type) {
      case XML_TEXT_NODE:
      case XML_CDATA_SECTION_NODE:
      case XML_COMMENT_NODE:
      case XML_PI_NODE:
      case XML_ENTITY_REF_NODE:
        return true;
      case XML_ELEMENT_NODE:
        return blocks_.count(node) == 0;
      default:
        return false;
    }
  }

  void visit_html_container(xmlNode* container, int depth) {
    if (depth > options_.max_depth) throw MarkupError("markup nests too deep");
    xmlNode* run_first = nullptr;
    xmlNode* run_last = nullptr;
    for (xmlNode* child = container->children; child != nullptr; child = child->next) {
      if (in_run(child) && !is_line_break(child)) {
        if (run_first == nullptr) run_first = child;
        run_last = child;
        continue;
      }
      if (run_first != nullptr) add_run(container, run_first, run_last);
      run_first = nullptr;
      if (child->type == XML_ELEMENT_NODE && !is_ignored(child)) {
        visit_html_container(child, depth + 1);
        add_attribute_units(child, &units_);
      }
    }
    if (run_first != nullptr) add_run(container, run_first, run_last);
  }

  void visit_xml_element(xmlNode* element, int depth) {
    if (depth > options_.max_depth) throw MarkupError("markup nests too deep");
    if (is_ignored(element)) return;
    bool has_text = false;
    for (const xmlNode* child = element->children; child != nullptr; child = child->next) {
      has_text = has_text || (child->type == XML_TEXT_NODE && !is_blank(view(child->content)));
    }
    if (has_text) {
      add_run(element, element->children, element->last);
      return;
    }
    for (xmlNode* child = element->children; child != nullptr; child = child->next) {
      if (child->type == XML_ELEMENT_NODE) visit_xml_element(child, depth + 1);
    }
  }

  // The unit of the run [first, last] of container's children (when its text has a letter or
  // digit), then the attribute units of its inline elements.
  void add_run(xmlNode* container, xmlNode* first, xmlNode* last) {
    UnitSlot slot;
    slot.container = container;
    slot.first = first;
    slot.last = last;
    slot.line_breaks_are_spaces = html_ || !keeps_line_breaks(container);
    RunText run;
    for (xmlNode* node = first;; node = node->next) {
      write_node(node, -1, 1, &slot, &run);
      if (node == last) break;
    }
    std::string& full = run.markup;
    std::size_t begin = 0;
    while (begin < full.size() && is_html_space(full[begin])) ++begin;
    std::size_t end = full.size();
    while (end > begin && is_html_space(full[end - 1])) --end;
    if (run.has_word) {
      slot.leading_space = full.substr(0, begin);
      slot.trailing_space = full.substr(end);
      slot.text = full.substr(begin, end - begin);
      push(std::move(slot));
    }
    for (UnitSlot& attribute_unit : run.attribute_units) push(std::move(attribute_unit));
  }

  // An XML element whose line breaks are its text's: verbatim by name (an ancestor's name does
  // not count: a <para> in a <screen> is rare and wraps), or under xml:space="preserve".
  static bool keeps_line_breaks(const xmlNode* element) {
    if (std::binary_search(std::begin(kXmlVerbatim), std::end(kXmlVerbatim), view(element->name))) {
      return true;
    }
    return xmlNodeGetSpacePreserve(element) == 1;
  }

  struct RunText {
    std::string markup;
    bool has_word = false;
    int placeholders = 0;
    std::vector<UnitSlot> attribute_units;
  };

  void write_node(xmlNode* node, int parent, int depth, UnitSlot* slot, RunText* run) {
    if (depth > options_.max_depth) throw MarkupError("markup nests too deep");
    if (node->type == XML_TEXT_NODE) {
      const std::string_view text = view(node->content);
      append_escaped(text, false, &run->markup);
      run->has_word = run->has_word || has_letter_or_digit(text);
      return;
    }
    InlineItem item;
    item.node = node;
    item.parent = parent;
    if (node->type != XML_ELEMENT_NODE || is_ignored(node)) {
      item.kind = InlineItem::Kind::kPlaceholder;
      item.open_tag = "<x id=\"" + std::to_string(++run->placeholders) + "\"/>";
      run->markup += item.open_tag;
      slot->items.push_back(std::move(item));
      return;
    }
    const std::string name = qualified_name(node);
    item.open_tag = "<" + name;
    for (const xmlAttr* a = node->properties; a != nullptr; a = a->next) {
      item.open_tag += ' ';
      if (a->ns != nullptr && a->ns->prefix != nullptr) {
        item.open_tag.append(view(a->ns->prefix)).append(":");
      }
      item.open_tag.append(view(a->name)).append("=\"");
      append_escaped(attribute_value(a), true, &item.open_tag);
      item.open_tag += '"';
    }
    const bool empty = node->children == nullptr;
    item.kind = empty ? InlineItem::Kind::kEmpty : InlineItem::Kind::kPaired;
    item.open_tag += empty ? "/>" : ">";
    if (!empty) item.close_tag = "</" + name + ">";
    run->markup += item.open_tag;
    const int index = static_cast<int>(slot->items.size());
    slot->items.push_back(std::move(item));
    for (xmlNode* child = node->children; child != nullptr; child = child->next) {
      write_node(child, index, depth + 1, slot, run);
    }
    run->markup += slot->items[index].close_tag;
    add_attribute_units(node, &run->attribute_units);
  }

  void add_attribute_units(xmlNode* element, std::vector<UnitSlot>* out) const {
    if (!html_) return;
    for (xmlAttr* a = element->properties; a != nullptr; a = a->next) {
      const std::string_view name = view(a->name);
      const bool translatable =
          contains(std::begin(kHtmlTranslatableAttributes), std::end(kHtmlTranslatableAttributes),
                   name) ||
          (name == "value" && view(element->name) == "input" && is_button_input(element));
      if (!translatable || a->ns != nullptr) continue;
      const std::string value = attribute_value(a);
      if (!has_letter_or_digit(value)) continue;
      UnitSlot slot;
      slot.attribute = a;
      std::string full;
      append_escaped(value, false, &full);
      std::size_t begin = 0;
      while (begin < full.size() && is_html_space(full[begin])) ++begin;
      std::size_t end = full.size();
      while (end > begin && is_html_space(full[end - 1])) --end;
      slot.leading_space = full.substr(0, begin);
      slot.trailing_space = full.substr(end);
      slot.text = full.substr(begin, end - begin);
      out->push_back(std::move(slot));
    }
  }

  static bool is_button_input(xmlNode* input) {
    for (const xmlAttr* a = input->properties; a != nullptr; a = a->next) {
      if (view(a->name) != "type") continue;
      const std::string type = attribute_value(a);
      return spans::same_name(type, "button") || spans::same_name(type, "submit") ||
             spans::same_name(type, "reset");
    }
    return false;
  }

  void push(UnitSlot slot) {
    if (units_.size() >= options_.max_units) {
      throw MarkupError("more than " + std::to_string(options_.max_units) + " text units");
    }
    units_.push_back(std::move(slot));
  }

  const MarkupOptions& options_;
  const bool html_;
  std::unordered_set<const xmlNode*> blocks_;  // HTML elements that end a run
  std::vector<UnitSlot> units_;
};

}  // namespace

void append_escaped(std::string_view text, bool in_attribute, std::string* out) {
  for (const char c : text) {
    switch (c) {
      case '&':
        *out += "&amp;";
        break;
      case '<':
        *out += "&lt;";
        break;
      case '>':
        *out += "&gt;";
        break;
      case '"':
        *out += in_attribute ? "&quot;" : "\"";
        break;
      default:
        *out += c;
    }
  }
}

std::vector<UnitSlot> find_units(xmlDoc* doc, const MarkupOptions& options) {
  return UnitFinder(options).find(doc);
}

}  // namespace rpt::documents::markup
