// Internal to markup_document.cc: the text units of a parsed libxml2 tree (markup_units.cc) and
// the writing of one translation back into the tree (markup_apply.cc). The slots point into the
// tree they were found in and are valid while it lives; applying a translation moves element
// nodes within its unit, frees only the unit's text nodes, and leaves every other slot valid.
#pragma once

#include <libxml/tree.h>

#include <string>
#include <string_view>
#include <vector>

#include "documents/markup_document.h"

namespace rpt::documents::markup {

// One tag of a text unit: an inline element (paired, or empty: written self-closing) or a
// placeholder for content left untouched (an ignored element, a comment, CDATA, an entity
// reference, a processing instruction), which keeps its subtree.
struct InlineItem {
  enum class Kind { kPaired, kEmpty, kPlaceholder };
  xmlNode* node = nullptr;
  int parent = -1;  // index of the enclosing paired item; -1: the unit's container
  Kind kind = Kind::kPaired;
  std::string open_tag;   // <b> <a href="x"> <br/> <x id="1"/>
  std::string close_tag;  // </b> for kPaired, else empty
};

struct UnitSlot {
  std::string text;  // the unit, as MarkupDocument::units() has it
  // Whitespace around the unit in the source, kept outside it.
  std::string leading_space;
  std::string trailing_space;
  // A text unit: the consecutive children [first, last] of container, and its tags.
  xmlNode* container = nullptr;
  xmlNode* first = nullptr;
  xmlNode* last = nullptr;
  std::vector<InlineItem> items;
  // An attribute unit: the attribute (text units have nullptr).
  xmlAttr* attribute = nullptr;
  // A line break in the unit is a space where the source wraps a paragraph: HTML, attribute
  // values, XML but under xml:space="preserve" and in verbatim elements (kXmlVerbatim).
  bool line_breaks_are_spaces = true;
};

// The units of `doc` in document order. Throws MarkupError past options.max_depth or
// options.max_units (the depth is checked on the whole tree before anything recurses).
std::vector<UnitSlot> find_units(xmlDoc* doc, const MarkupOptions& options);

// Writes `translation` into the tree in place of slot's unit. False (the tree untouched) when
// its tags do not fit: one missing, added, duplicated, or moved to another parent; or its text
// is not valid UTF-8 or has characters XML does not allow.
bool apply_translation(const UnitSlot& slot, std::string_view translation, MarkupKind kind);

// text with & < > (and " when in_attribute) written as entities.
void append_escaped(std::string_view text, bool in_attribute, std::string* out);

}  // namespace rpt::documents::markup
