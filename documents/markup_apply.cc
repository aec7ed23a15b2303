// Writing one translated unit back into the tree (markup_units.h): the translation is read as
// text and the unit's own tags, checked against the unit's nesting, and only then written.
#include <libxml/HTMLparser.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/text_hygiene.h"
#include "documents/markup_units.h"
#include "spans/span_markup.h"

namespace rpt::documents::markup {
namespace {

struct Token {
  enum class Kind { kText, kOpen, kClose, kLeaf };
  Kind kind = Kind::kText;
  int item = -1;     // kOpen, kLeaf: the index into UnitSlot::items
  std::string text;  // kText: decoded; kClose: the closing tag
};

// XML 1.0's Char; HTML text may hold any character but NUL (sources have control characters).
bool allowed_in_text(char32_t c, MarkupKind kind) {
  if (kind == MarkupKind::kHtml) return c != 0 && (c < 0xD800 || c > 0xDFFF) && c <= 0x10FFFF;
  return c == 0x9 || c == 0xA || c == 0xD || (c >= 0x20 && c <= 0xD7FF) ||
         (c >= 0xE000 && c <= 0xFFFD) || (c >= 0x10000 && c <= 0x10FFFF);
}

void append_utf8(char32_t c, std::string* out) {
  if (c < 0x80) {
    *out += static_cast<char>(c);
  } else if (c < 0x800) {
    *out += static_cast<char>(0xC0 | (c >> 6));
    *out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    *out += static_cast<char>(0xE0 | (c >> 12));
    *out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    *out += static_cast<char>(0xF0 | (c >> 18));
    *out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    *out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

// The character reference at text[at] == '&' ("&amp;", "&#233;", "&#xE9;", for HTML also
// "&eacute;"): the code point and the reference's length, or 0 when it is none (a lone '&').
std::size_t decode_reference(std::string_view text, std::size_t at, MarkupKind kind,
                             char32_t* code) {
  const std::size_t semicolon = text.find(';', at + 1);
  if (semicolon == std::string_view::npos || semicolon - at > 34) return 0;
  const std::string_view name = text.substr(at + 1, semicolon - at - 1);
  if (name.empty()) return 0;
  if (name[0] == '#') {
    const bool hex = name.size() > 1 && (name[1] == 'x' || name[1] == 'X');
    const std::string_view digits = name.substr(hex ? 2 : 1);
    if (digits.empty() || digits.size() > 8) return 0;
    std::uint32_t value = 0;
    for (const char c : digits) {
      int digit = -1;
      if (c >= '0' && c <= '9') digit = c - '0';
      if (hex && c >= 'a' && c <= 'f') digit = c - 'a' + 10;
      if (hex && c >= 'A' && c <= 'F') digit = c - 'A' + 10;
      if (digit < 0) return 0;
      value = value * (hex ? 16 : 10) + static_cast<std::uint32_t>(digit);
    }
    *code = value;
    return allowed_in_text(value, kind) ? semicolon + 1 - at : 0;
  }
  constexpr std::pair<std::string_view, char32_t> kPredefined[] = {
      {"amp", '&'}, {"lt", '<'}, {"gt", '>'}, {"quot", '"'}, {"apos", '\''}};
  for (const auto& [entity, value] : kPredefined) {
    if (name == entity) {
      *code = value;
      return semicolon + 1 - at;
    }
  }
  if (kind == MarkupKind::kHtml) {
    const std::string name_copy(name);
    const htmlEntityDesc* entity =
        htmlEntityLookup(reinterpret_cast<const xmlChar*>(name_copy.c_str()));
    if (entity != nullptr) {
      *code = entity->value;
      return semicolon + 1 - at;
    }
  }
  return 0;
}

// Text and the slot's tags. False when a tag-shaped thing is not one of the slot's tags or
// comes more often than the slot has it, or the text has characters XML does not allow.
bool tokenize(std::string_view translation, const UnitSlot& slot, MarkupKind kind,
              std::vector<Token>* tokens) {
  if (!is_valid_utf8(translation)) return false;
  struct Occurrences {
    std::vector<Token> tags;  // in source order
    std::size_t used = 0;
  };
  // Opening tags and leaves by occurrence (the k-th "<b>" is the k-th <b> of the source);
  // a closing tag closes whatever is open (fits_nesting checks that it is its own).
  std::unordered_map<std::string_view, Occurrences> tags;
  for (int i = 0; i < static_cast<int>(slot.items.size()); ++i) {
    const InlineItem& item = slot.items[i];
    const bool paired = item.kind == InlineItem::Kind::kPaired;
    tags[item.open_tag].tags.push_back({paired ? Token::Kind::kOpen : Token::Kind::kLeaf, i, {}});
    if (paired) tags[item.close_tag].tags.push_back({Token::Kind::kClose, -1, item.close_tag});
  }
  std::string text;
  const auto flush_text = [&] {
    if (!text.empty()) tokens->push_back({Token::Kind::kText, -1, std::move(text)});
    text.clear();
  };
  for (std::size_t i = 0; i < translation.size();) {
    const char c = translation[i];
    if (c == '<') {
      const std::size_t end = translation.find_first_of("<>", i + 1);
      if (end != std::string_view::npos && translation[end] == '>') {
        const auto found = tags.find(translation.substr(i, end + 1 - i));
        if (found != tags.end()) {
          Occurrences& occurrences = found->second;
          if (occurrences.used == occurrences.tags.size()) return false;  // a tag added
          flush_text();
          tokens->push_back(occurrences.tags[occurrences.used++]);
          i = end + 1;
          continue;
        }
      }
      if (spans::match_tag(translation, i).length > 0) return false;  // a tag the unit lacks
    } else if (c == '&') {
      char32_t code = 0;
      const std::size_t length = decode_reference(translation, i, kind, &code);
      if (length > 0) {
        append_utf8(code, &text);
        i += length;
        continue;
      }
    } else {
      char32_t code = 0;
      std::size_t next = i;
      next_code_point(translation, &next, &code);
      if (!allowed_in_text(code, kind)) return false;
      text.append(translation.substr(i, next - i));
      i = next;
      continue;
    }
    text += c;
    ++i;
  }
  flush_text();
  return true;
}

// Each tag once, each element under the parent it has in the source, properly nested.
bool fits_nesting(const std::vector<Token>& tokens, const UnitSlot& slot) {
  std::vector<int> open;
  std::size_t tags_seen = 0;
  for (const Token& token : tokens) {
    if (token.kind == Token::Kind::kText) continue;
    ++tags_seen;
    const int parent = open.empty() ? -1 : open.back();
    if (token.kind == Token::Kind::kClose) {
      if (parent < 0 || slot.items[parent].close_tag != token.text) return false;
      open.pop_back();
      continue;
    }
    if (slot.items[token.item].parent != parent) return false;
    if (token.kind == Token::Kind::kOpen) open.push_back(token.item);
  }
  std::size_t tags_expected = 0;
  for (const InlineItem& item : slot.items) {
    tags_expected += item.kind == InlineItem::Kind::kPaired ? 2 : 1;
  }
  return open.empty() && tags_seen == tags_expected;
}

xmlNode* new_text(xmlNode* near, std::string_view text) {
  const std::string copy(text);
  xmlNode* node = xmlNewDocText(near->doc, reinterpret_cast<const xmlChar*>(copy.c_str()));
  if (node == nullptr) throw std::bad_alloc();
  return node;
}

// Unlinks the unit's nodes: text nodes are freed, elements and placeholders kept to be placed
// again (placeholders with their subtrees, paired elements emptied).
void take_apart(const UnitSlot& slot) {
  for (xmlNode* node = slot.first;;) {
    xmlNode* const next = node->next;
    const bool at_end = node == slot.last;
    xmlUnlinkNode(node);
    if (node->type == XML_TEXT_NODE) xmlFreeNode(node);
    if (at_end) break;
    node = next;
  }
  for (const InlineItem& item : slot.items) {
    if (item.kind != InlineItem::Kind::kPaired) continue;
    while (item.node->children != nullptr) {
      xmlNode* child = item.node->children;
      xmlUnlinkNode(child);
      if (child->type == XML_TEXT_NODE) xmlFreeNode(child);
    }
  }
}

}  // namespace

bool apply_translation(const UnitSlot& slot, std::string_view translation, MarkupKind kind) {
  std::vector<Token> tokens;
  if (!tokenize(translation, slot, kind, &tokens)) return false;
  if (slot.attribute != nullptr) {
    std::string value = slot.leading_space;
    for (const Token& token : tokens) {
      if (token.kind != Token::Kind::kText) return false;
      value += token.text;
    }
    value += slot.trailing_space;
    xmlSetNsProp(slot.attribute->parent, slot.attribute->ns, slot.attribute->name,
                 reinterpret_cast<const xmlChar*>(value.c_str()));
    return true;
  }
  if (!fits_nesting(tokens, slot)) return false;

  xmlNode* const anchor = slot.last->next;  // not in the unit: never moved or freed
  xmlNode* const container = slot.container;
  take_apart(slot);
  std::vector<xmlNode*> open;
  const auto place = [&](xmlNode* node) {
    if (!open.empty()) {
      xmlAddChild(open.back(), node);  // a text node may merge into its neighbour
    } else if (anchor != nullptr) {
      xmlAddPrevSibling(anchor, node);
    } else {
      xmlAddChild(container, node);
    }
  };
  if (!slot.leading_space.empty()) place(new_text(container, slot.leading_space));
  for (const Token& token : tokens) {
    switch (token.kind) {
      case Token::Kind::kText:
        place(new_text(container, token.text));
        break;
      case Token::Kind::kOpen:
        place(slot.items[token.item].node);
        open.push_back(slot.items[token.item].node);
        break;
      case Token::Kind::kClose:
        open.pop_back();
        break;
      case Token::Kind::kLeaf:
        place(slot.items[token.item].node);
        break;
    }
  }
  if (!slot.trailing_space.empty()) place(new_text(container, slot.trailing_space));
  return true;
}

}  // namespace rpt::documents::markup
