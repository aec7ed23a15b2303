// XLIFF 1.2 and 2.0/2.1 catalogues (catalog.h), read and written with libxml2; what is translated
// and how the file comes back: docs/localization.md. A text is one <source>'s content (1.2
// <trans-unit>, or each segment <mrk> of its <seg-source>; 2.0 <segment>) that may be translated
// and has no <target> (1.2 segment: no target <mrk> of its mid) with content (but for a
// stand-in: 1.2 state="new" or "needs-translation", 2.0 a copy of the source in state initial
// without rpt's own subState): kText when it holds only text, else kXml (inline elements as tags);
// a blank source is not translatable; stats().entries counts translatable units (1.2) or segments
// (2.0). A target keeps its source's blank edges, a new 1.2 <target> gets xml:lang only when its
// source has one, POSIX language names are written as BCP 47 ("pt_BR" as "pt-BR"). Parsing is
// strict (no DTD, no entity, no XML_PARSE_HUGE); const calls may run at once (render() reparses).
#include "documents/xliff_catalog.h"

#include <libxml/SAX2.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlsave.h>

#include <climits>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "common/text_hygiene.h"

#include "documents/libxml_handles.h"
#include "documents/xliff_pairs.h"
#include "documents/translation_count.h"

namespace rpt::documents {
namespace {

constexpr std::string_view kNamespace12 = "urn:oasis:names:tc:xliff:document:1.2";
constexpr std::string_view kNamespace20 = "urn:oasis:names:tc:xliff:document:2.0";

enum class Version { k12, k20 };

// The subState rpt gives a 2.0 segment it leaves for review (state "initial"), which tells it
// from a stand-in in that state (Scanner::is_stand_in20).
constexpr std::string_view kOwnReview = "rpt:review";

using libxml::attribute;
using libxml::view;

const xmlChar* xml(const char* text) { return reinterpret_cast<const xmlChar*>(text); }

bool is_xml_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

void init_libxml2_once() {
  static std::once_flag once;
  std::call_once(once, [] { xmlInitParser(); });
}

// What libxml2's callbacks saw during the parse running on this thread: its first error (it goes
// on after one, and its last is often only "Premature end of data") and any entity declaration.
struct ParseLog {
  xmlParserCtxt* context = nullptr;
  bool error_seen = false;
  int error_line = 0;
  std::string error;
  bool entity_declared = false;
  int entity_line = 0;
};
thread_local ParseLog* t_parse_log = nullptr;

void remember_first_error(void*, xmlError* error) {
  ParseLog* log = t_parse_log;
  if (log == nullptr || log->error_seen || error == nullptr || error->level < XML_ERR_ERROR) return;
  log->error_seen = true;
  log->error_line = error->line;
  try {  // nothing may be thrown through libxml2
    std::string_view message = view(xml(error->message));
    while (!message.empty() && is_xml_space(message.back())) message.remove_suffix(1);
    log->error = message;
  } catch (const std::bad_alloc&) {
    log->error.clear();
  }
}

// No XLIFF needs an entity, and a declared one may expand without bound (billion laughs): the
// parse stops at the first declaration, before any reference to it is read.
void refuse_entity(void*, const xmlChar*, int, const xmlChar*, const xmlChar*, xmlChar*) {
  ParseLog* log = t_parse_log;
  if (log == nullptr || log->entity_declared) return;
  log->entity_declared = true;
  log->entity_line = xmlSAX2GetLineNumber(log->context);
  xmlStopParser(log->context);
}

// libxml2 keeps the tree in UTF-8 whatever the source's encoding; saying so makes its writer
// keep non-ASCII attribute values as they are and xmlParseInNodeContext read translations as
// UTF-8.
void declare_utf8(xmlDoc* doc) {
  if (doc->encoding != nullptr) xmlFree(const_cast<xmlChar*>(doc->encoding));
  doc->encoding = xmlStrdup(xml("UTF-8"));
  if (doc->encoding == nullptr) throw std::bad_alloc();
}

libxml::DocPtr parse_xml(std::string_view bytes) {
  init_libxml2_once();
  if (bytes.size() > INT_MAX) throw CatalogError("XLIFF: file too large");
  libxml::XmlContextPtr context(xmlNewParserCtxt());
  if (context == nullptr) throw std::bad_alloc();
  context->sax->serror = remember_first_error;
  context->sax->entityDecl = refuse_entity;
  // The encoding is the declared one (or UTF-8/UTF-16 by the byte order mark).
  constexpr int kOptions = XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING;
  ParseLog log;
  log.context = context.get();
  t_parse_log = &log;
  libxml::DocPtr doc(xmlCtxtReadMemory(context.get(), bytes.data(), static_cast<int>(bytes.size()),
                                       nullptr, nullptr, kOptions));
  t_parse_log = nullptr;
  if (log.entity_declared) {
    throw CatalogError("XLIFF: line " + std::to_string(log.entity_line) +
                       ": the document type declares an entity; entities are not read");
  }
  if (doc != nullptr && context->wellFormed) {
    declare_utf8(doc.get());
    return doc;
  }
  if (!log.error_seen) {  // no error reported on the way: the parse's last one, if any
    t_parse_log = &log;
    const xmlError* last = xmlCtxtGetLastError(context.get());
    if (last != nullptr) remember_first_error(nullptr, const_cast<xmlError*>(last));
    t_parse_log = nullptr;
  }
  std::string message = "XLIFF is not well-formed XML";
  if (log.error_seen) message += ": line " + std::to_string(log.error_line) + ": " + log.error;
  throw CatalogError(message);
}

struct Tree {
  libxml::DocPtr doc;
  Version version = Version::k12;
  std::string_view ns;  // the XLIFF namespace of that version
};

Tree read_xliff(std::string_view bytes) {
  Tree tree{parse_xml(bytes), Version::k12, {}};
  const xmlNode* root = xmlDocGetRootElement(tree.doc.get());
  if (root == nullptr || view(root->name) != "xliff") {
    throw CatalogError("XLIFF: the root element is <" +
                       std::string(root == nullptr ? "" : view(root->name)) + ">, not <xliff>");
  }
  const std::optional<std::string> version = attribute(root, "version");
  if (version == "1.2") {
    tree.version = Version::k12;
    tree.ns = kNamespace12;
  } else if (version == "2.0" || version == "2.1") {
    tree.version = Version::k20;
    tree.ns = kNamespace20;
  } else {
    throw CatalogError((version ? "XLIFF version '" + *version + "' is not supported"
                                : std::string("XLIFF: <xliff> has no version attribute")) +
                       ": rpt reads XLIFF 1.2, 2.0 and 2.1");
  }
  const std::string_view ns = root->ns == nullptr ? "" : view(root->ns->href);
  if (ns != tree.ns) {
    throw CatalogError("XLIFF " + *version + ": <xliff> is in the namespace '" + std::string(ns) +
                       "', not " + std::string(tree.ns));
  }
  return tree;
}

bool is_element(const xmlNode* node, std::string_view ns, std::string_view name) {
  return node != nullptr && node->type == XML_ELEMENT_NODE && node->ns != nullptr &&
         view(node->ns->href) == ns && view(node->name) == name;
}

xmlNode* next_element(xmlNode* node) {
  while (node != nullptr && node->type != XML_ELEMENT_NODE) node = node->next;
  return node;
}

xmlNode* child_element(const xmlNode* parent, std::string_view ns, std::string_view name) {
  for (xmlNode* child = parent->children; child != nullptr; child = child->next) {
    if (is_element(child, ns, name)) return child;
  }
  return nullptr;
}

// Whether a source or target holds anything: an element, or text that is not blank (comments
// and processing instructions do not count).
bool has_content(const xmlNode* element) {
  std::string text;
  for (const xmlNode* child = element->children; child != nullptr; child = child->next) {
    if (child->type == XML_TEXT_NODE || child->type == XML_CDATA_SECTION_NODE) {
      text += view(child->content);
    } else if (child->type != XML_COMMENT_NODE && child->type != XML_PI_NODE) {
      return true;
    }
  }
  return !is_blank_text(text);
}

// Nodes as libxml2 writes them (UTF-8, & < > escaped in text).
std::string serialize_nodes(xmlNode* first) {
  libxml::BufferPtr buffer(xmlBufferCreate());
  if (buffer == nullptr) throw std::bad_alloc();
  xmlSaveCtxt* save = xmlSaveToBuffer(buffer.get(), "UTF-8", XML_SAVE_NO_DECL);
  if (save == nullptr) throw std::bad_alloc();
  for (xmlNode* node = first; node != nullptr; node = node->next) xmlSaveTree(save, node);
  if (xmlSaveClose(save) < 0) throw CatalogError("XLIFF: cannot write a source's content");
  return std::string(reinterpret_cast<const char*>(xmlBufferContent(buffer.get())),
                     static_cast<std::size_t>(xmlBufferLength(buffer.get())));
}

// A source's text: plain when it holds only text, else its children as an XML fragment.
CatalogText source_text(const xmlNode* source) {
  CatalogText text;
  for (const xmlNode* child = source->children; child != nullptr; child = child->next) {
    if (child->type != XML_TEXT_NODE && child->type != XML_CDATA_SECTION_NODE) {
      text.format = TextFormat::kXml;
    }
  }
  if (text.format == TextFormat::kXml) {
    text.text = serialize_nodes(source->children);
  } else {
    for (const xmlNode* child = source->children; child != nullptr; child = child->next) {
      text.text += view(child->content);
    }
  }
  return text;
}

// One text's place in the tree.
struct Slot {
  xmlNode* source = nullptr;
  // The <target> (or segment <mrk>) already there, empty or holding a stand-in; null: none.
  xmlNode* target = nullptr;
  xmlNode* segment = nullptr;  // 2.0: the <segment>, which carries the state
  xmlNode* file = nullptr;     // 1.2: the <file>, which carries target-language
  xmlNode* unit = nullptr;     // 1.2, a segment <mrk> of a <seg-source>: its <trans-unit>
};

bool is_segment_mark(const xmlNode* node, std::string_view ns) {
  return is_element(node, ns, "mrk") && attribute(node, "mtype") == "seg";
}

// The <mrk mtype="seg"> of a 1.2 <seg-source> or <target> (also inside <g>), in document order.
void segment_marks(xmlNode* parent, std::string_view ns, std::vector<xmlNode*>* marks) {
  for (xmlNode* child = parent->children; child != nullptr; child = child->next) {
    if (is_segment_mark(child, ns)) {
      marks->push_back(child);
    } else if (child->type == XML_ELEMENT_NODE) {
      segment_marks(child, ns, marks);
    }
  }
}

xmlNode* segment_mark(xmlNode* parent, std::string_view ns, const std::string& mid) {
  if (parent == nullptr) return nullptr;
  std::vector<xmlNode*> marks;
  segment_marks(parent, ns, &marks);
  for (xmlNode* mark : marks) {
    if (attribute(mark, "mid") == mid) return mark;
  }
  return nullptr;
}

// The segments of a 1.2 unit's <seg-source>; empty (the unit is one text) when it has none, or
// one without a mid or with a mid used twice: no target mark could be matched to it.
std::vector<xmlNode*> unit_segments(const xmlNode* unit, std::string_view ns) {
  xmlNode* seg_source = child_element(unit, ns, "seg-source");
  std::vector<xmlNode*> marks;
  if (seg_source == nullptr || child_element(unit, ns, "source") == nullptr) return marks;
  segment_marks(seg_source, ns, &marks);
  std::set<std::string> mids;
  for (const xmlNode* mark : marks) {
    const std::optional<std::string> mid = attribute(mark, "mid");
    if (!mid || !mids.insert(*mid).second) return {};
  }
  return marks;
}

struct Scan {
  std::vector<Slot> slots;
  CatalogStats stats;
};

// The units of a tree in document order, and the counts. The same tree gives the same slots:
// render() finds each text's place again this way.
class Scanner {
 public:
  Scanner(const Tree& tree, std::size_t max_texts)
      : version_(tree.version), ns_(tree.ns), max_texts_(max_texts) {}

  Scan scan(xmlDoc* doc) {
    visit(xmlDocGetRootElement(doc), nullptr, true);
    return std::move(scan_);
  }

 private:
  // translate="no" on a <file> (2.0), <group> or unit holds for what it encloses, unless an
  // inner element says "yes".
  static bool translatable(const xmlNode* element, bool enclosing) {
    const std::optional<std::string> translate = attribute(element, "translate");
    if (translate == "no") return false;
    if (translate == "yes") return true;
    return enclosing;
  }

  void visit(xmlNode* parent, xmlNode* file, bool translate) {
    for (xmlNode* child = parent->children; child != nullptr; child = child->next) {
      if (child->type != XML_ELEMENT_NODE || child->ns == nullptr || view(child->ns->href) != ns_) {
        continue;
      }
      const std::string_view name = view(child->name);
      const bool child_translate = translatable(child, translate);
      if (name == "file") {
        visit(child, child, child_translate);
      } else if (name == "body" || name == "group") {
        visit(child, file, child_translate);
      } else if (version_ == Version::k12 && name == "trans-unit") {
        add_unit12(child, file, child_translate);
      } else if (version_ == Version::k20 && name == "unit") {
        for (xmlNode* segment = child->children; segment != nullptr; segment = segment->next) {
          if (!is_element(segment, ns_, "segment")) continue;  // <ignorable>s are kept as they are
          xmlNode* source = child_element(segment, ns_, "source");
          xmlNode* target = child_element(segment, ns_, "target");
          add(source, target, segment, file, child_translate, nullptr,
              is_stand_in20(segment, source, target));
        }
      }
    }
  }

  // A 2.0 target that copies its source in a segment whose state is explicitly "initial": a
  // stand-in (Angular's ng-extract-i18n-merge writes every new segment so with --format xlf2),
  // translated as if it were empty. 2.0 has no state of its own for that: "initial" also marks a
  // target awaiting review, so rpt marks its own with kOwnReview (a kept source, or a translation
  // that equals its source, stays for review as 1.2's needs-review-translation does); a copy in
  // another state, or in none (a tool that writes no states), was kept on purpose.
  static bool is_stand_in20(const xmlNode* segment, const xmlNode* source, const xmlNode* target) {
    if (source == nullptr || target == nullptr || attribute(segment, "state") != "initial" ||
        attribute(segment, "subState") == kOwnReview) {
      return false;
    }
    const CatalogText source_content = source_text(source);
    const CatalogText target_content = source_text(target);
    return source_content.format == target_content.format &&
           source_content.text == target_content.text;
  }

  // A unit whose <seg-source> marks segments (<mrk mtype="seg">: Okapi, memoQ, Trados) is
  // translated segment by segment into the <target>'s marks of the same mid, as those tools read
  // it back; Trados ships that target with the marks empty. A target with content but without
  // the segment's mark was translated unsegmented: it stays.
  //
  // A target whose state says it is no translation yet (state="new" or "needs-translation": the
  // source copied in as a stand-in, as Angular's ng-extract-i18n-merge and xliffmerge write
  // every new unit) is translated as if it were empty.
  void add_unit12(xmlNode* unit, xmlNode* file, bool translate) {
    xmlNode* target = child_element(unit, ns_, "target");
    const std::optional<std::string> state =
        target == nullptr ? std::nullopt : attribute(target, "state");
    const bool stand_in = state == "new" || state == "needs-translation";
    const std::vector<xmlNode*> marks = unit_segments(unit, ns_);
    if (marks.empty()) {
      add(child_element(unit, ns_, "source"), target, nullptr, file, translate, nullptr, stand_in);
      return;
    }
    for (xmlNode* mark : marks) {
      xmlNode* target_mark = segment_mark(target, ns_, *attribute(mark, "mid"));
      if (target_mark == nullptr && !stand_in && target != nullptr && has_content(target)) {
        target_mark = target;
      }
      add(mark, target_mark, nullptr, file, translate, unit, stand_in);
    }
  }

  void add(xmlNode* source, xmlNode* target, xmlNode* segment, xmlNode* file, bool translate,
           xmlNode* unit = nullptr, bool stand_in = false) {
    if (source == nullptr) return;  // not valid XLIFF: nothing to translate from
    CatalogStats& stats = scan_.stats;
    if (!translate || !has_content(source)) {
      ++stats.not_translatable;
      return;
    }
    ++stats.entries;
    if (target != nullptr && !stand_in && has_content(target)) {
      ++stats.already_translated;
      return;
    }
    if (scan_.slots.size() >= max_texts_) {
      throw CatalogError("XLIFF: more than " + std::to_string(max_texts_) + " texts to translate");
    }
    ++stats.to_translate;
    scan_.slots.push_back({source, target, segment, file, unit});
  }

  const Version version_;
  const std::string_view ns_;
  const std::size_t max_texts_;
  Scan scan_;
};

// The inline elements of a source or translation as a multiset: namespace, name, id (2.0's
// <ec/> and <em/>: the startRef naming their start) and, for 1.2's elements of native code
// (<bpt>, <ept>, <ph>, <it>), their content, which the translation must not change.
using InlineKey = std::tuple<std::string, std::string, std::string, std::string>;

void collect_inline(xmlNode* first, Version version, std::multiset<InlineKey>* keys) {
  for (xmlNode* node = first; node != nullptr; node = node->next) {
    if (node->type != XML_ELEMENT_NODE) continue;
    const std::string_view name = view(node->name);
    const bool native_code =
        version == Version::k12 && (name == "bpt" || name == "ept" || name == "ph" || name == "it");
    keys->emplace(node->ns == nullptr ? "" : view(node->ns->href), name,
                  attribute(node, "id").value_or(attribute(node, "startRef").value_or("")),
                  native_code ? serialize_nodes(node->children) : "");
    if (!native_code) collect_inline(node->children, version, keys);
  }
}

std::string_view leading_space(std::string_view text) {
  std::size_t end = 0;
  while (end < text.size() && is_xml_space(text[end])) ++end;
  return text.substr(0, end);
}

std::string_view trailing_space(std::string_view text) {
  std::size_t begin = text.size();
  while (begin > 0 && is_xml_space(text[begin - 1])) --begin;
  return text.substr(begin);
}

// Valid UTF-8 made only of characters XML 1.0 allows.
bool is_xml_text(std::string_view text) {
  char32_t c = 0;
  for (std::size_t i = 0; i < text.size();) {
    if (!next_code_point(text, &i, &c)) return false;
    const bool allowed = c == 0x9 || c == 0xA || c == 0xD || (c >= 0x20 && c <= 0xD7FF) ||
                         (c >= 0xE000 && c <= 0xFFFD) || c >= 0x10000;
    if (!allowed) return false;
  }
  return true;
}

// What a translation's inline elements must be: the source's, and no paired code whose end
// comes before its start unless the source has it so (xliff_pairs.h).
struct ExpectedInline {
  std::multiset<InlineKey> keys;
  std::set<std::string> misordered_pairs;
};

ExpectedInline expected_inline(xmlNode* source, Version version) {
  ExpectedInline expected;
  collect_inline(source->children, version, &expected.keys);
  expected.misordered_pairs =
      xliff::misordered_pairs(source->children, view(source->ns->href), version == Version::k12);
  return expected;
}

// `content` as the children of the empty `target`, parsed in its context so that inline
// elements fall in the XLIFF namespace. False (the target left empty) when it is not
// well-formed or, with `expected` given, its inline elements are not those.
bool fill(xmlNode* target, const std::string& content, TextFormat format, Version version,
          const ExpectedInline* expected) {
  if (content.empty() || !is_xml_text(content)) return false;
  if (format == TextFormat::kText) {
    xmlNode* text =
        xmlNewDocTextLen(target->doc, xml(content.c_str()), static_cast<int>(content.size()));
    if (text == nullptr) throw std::bad_alloc();
    xmlAddChild(target, text);
    return true;
  }
  xmlNode* parsed = nullptr;
  const xmlParserErrors status =
      xmlParseInNodeContext(target, content.data(), static_cast<int>(content.size()),
                            XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING, &parsed);
  libxml::NodeListPtr nodes(parsed);
  if (status != XML_ERR_OK || nodes == nullptr) return false;
  if (expected != nullptr) {
    std::multiset<InlineKey> found;
    collect_inline(nodes.get(), version, &found);
    if (found != expected->keys) return false;
    for (const std::string& pair :
         xliff::misordered_pairs(nodes.get(), view(target->ns->href), version == Version::k12)) {
      if (!expected->misordered_pairs.contains(pair)) return false;
    }
  }
  xmlNode* last = nullptr;
  for (xmlNode* node = nodes.get(); node != nullptr; node = node->next) {
    node->parent = target;
    last = node;
  }
  target->children = nodes.release();
  target->last = last;
  return true;
}

// An empty <target> for the slot: the one there, emptied, or a new one after the <source> (and
// a 1.2 <seg-source>), indented as the source is.
struct EmptyTarget {
  xmlNode* target = nullptr;
  xmlNode* indent = nullptr;  // the whitespace added before a new target; null: none
  bool added = false;
};

EmptyTarget empty_target(const Slot& slot, Version version) {
  if (slot.target != nullptr) {
    xmlFreeNodeList(slot.target->children);
    slot.target->children = nullptr;
    slot.target->last = nullptr;
    return {slot.target, nullptr, false};
  }
  xmlNode* after = slot.source;
  xmlNode* next = next_element(slot.source->next);
  if (version == Version::k12 && next != nullptr && next->ns == slot.source->ns &&
      view(next->name) == "seg-source") {
    after = next;
  }
  EmptyTarget empty{xmlNewDocNode(slot.source->doc, slot.source->ns, xml("target"), nullptr),
                    nullptr, true};
  if (empty.target == nullptr) throw std::bad_alloc();
  xmlAddNextSibling(after, empty.target);
  const xmlNode* before_source = slot.source->prev;
  if (before_source != nullptr && before_source->type == XML_TEXT_NODE &&
      trailing_space(view(before_source->content)).size() == view(before_source->content).size()) {
    empty.indent = xmlNewDocText(slot.source->doc, before_source->content);
    if (empty.indent == nullptr) throw std::bad_alloc();
    xmlAddPrevSibling(empty.target, empty.indent);  // after an element: not merged into text
  }
  return empty;
}

// The empty mark for a segment's translation in its unit's <target>. A unit's first segment
// translated makes that target (or fills an empty one) as a copy of the <seg-source>, its
// segment marks emptied, the text and elements between them kept.
xmlNode* segment_target(const Slot& slot, Version version, bool* target_added) {
  const std::string_view ns = view(slot.source->ns->href);
  const std::string mid = attribute(slot.source, "mid").value_or("");
  xmlNode* target = child_element(slot.unit, ns, "target");
  if (xmlNode* mark = segment_mark(target, ns, mid)) return mark;
  const EmptyTarget empty = empty_target({child_element(slot.unit, ns, "source"), target}, version);
  *target_added = empty.added;
  const xmlNode* seg_source = child_element(slot.unit, ns, "seg-source");
  for (xmlNode* node = seg_source->children; node != nullptr; node = node->next) {
    // Elements cloned into the target's scope, their namespace not declared again on each
    // (libxml2 clones only elements that way).
    xmlNode* copy = nullptr;
    if (node->type != XML_ELEMENT_NODE) {
      copy = xmlDocCopyNode(node, node->doc, 1);
    } else if (xmlDOMWrapCloneNode(nullptr, node->doc, node, &copy, node->doc, empty.target, 1,
                                   0) != 0) {
      copy = nullptr;
    }
    if (copy == nullptr) throw std::bad_alloc();
    xmlAddChild(empty.target, copy);
  }
  std::vector<xmlNode*> marks;
  segment_marks(empty.target, ns, &marks);
  for (xmlNode* mark : marks) {
    xmlFreeNodeList(mark->children);
    mark->children = nullptr;
    mark->last = nullptr;
  }
  return segment_mark(empty.target, ns, mid);
}

void set_attribute(xmlNode* element, const char* name, const std::string& value) {
  if (xmlSetProp(element, xml(name), xml(value.c_str())) == nullptr) throw std::bad_alloc();
}

// "pt_BR.UTF-8@euro" as BCP 47 wants it: "pt-BR".
std::string bcp47(std::string_view language) {
  language = language.substr(0, language.find_first_of(".@"));
  std::string tag(language);
  for (char& c : tag) {
    if (c == '_') c = '-';
  }
  return tag;
}

bool has_xml_declaration(std::string_view source) {
  if (source.starts_with("\xEF\xBB\xBF")) source.remove_prefix(3);
  return source.starts_with("<?xml") && source.size() > 5 && is_xml_space(source[5]);
}

// UTF-8. The declaration is kept when the source has one, or is not UTF-8 (where the source
// needed one, or a byte order mark, to say what it was).
std::string serialize_document(xmlDoc* doc, std::string_view source) {
  const bool utf16 = source.starts_with("\xFF\xFE") || source.starts_with("\xFE\xFF") ||
                     source.substr(0, 4).find('\0') != std::string_view::npos;
  const bool declaration = has_xml_declaration(source) || utf16;
  libxml::BufferPtr buffer(xmlBufferCreate());
  if (buffer == nullptr) throw std::bad_alloc();
  xmlSaveCtxt* save = xmlSaveToBuffer(buffer.get(), "UTF-8", declaration ? 0 : XML_SAVE_NO_DECL);
  if (save == nullptr) throw std::bad_alloc();
  xmlSaveDoc(save, doc);
  if (xmlSaveClose(save) < 0) throw CatalogError("XLIFF: cannot write the file");
  const std::string_view text(reinterpret_cast<const char*>(xmlBufferContent(buffer.get())),
                              static_cast<std::size_t>(xmlBufferLength(buffer.get())));
  // libxml2 reads CRLF as LF; a file that ended its lines with CRLF gets them back.
  const std::size_t first_newline = source.find('\n');
  if (first_newline == std::string_view::npos || first_newline == 0 ||
      source[first_newline - 1] != '\r') {
    return std::string(text);
  }
  std::string crlf;
  crlf.reserve(text.size() + text.size() / 32);
  for (const char c : text) {
    if (c == '\n') crlf += '\r';
    crlf += c;
  }
  return crlf;
}

// A file whose target language is another than the translation's is refused, as a PO file's
// Language is: German targets in a file that says French (an Xcode export for "fr" sent to an
// en-de model) would be imported as French.
void check_target_language(const Tree& tree, const std::string& language) {
  xmlNode* root = xmlDocGetRootElement(tree.doc.get());
  std::vector<std::pair<const xmlNode*, const char*>> declared = {{root, "trgLang"}};
  if (tree.version == Version::k12) {
    declared.clear();
    for (xmlNode* file = root->children; file != nullptr; file = file->next) {
      if (is_element(file, tree.ns, "file")) declared.emplace_back(file, "target-language");
    }
  }
  for (const auto& [element, name] : declared) {
    const std::optional<std::string> named = attribute(element, name);
    if (named && !named->empty() && !same_primary_language(*named, language)) {
      throw CatalogError("XLIFF: line " + std::to_string(xmlGetLineNo(element)) + ": " + name +
                         " is " + *named + ", the target is " + language);
    }
  }
}

class XliffCatalog : public Catalog {
 public:
  XliffCatalog(std::string_view bytes, const CatalogOptions& options)
      : source_(bytes), options_(options) {
    const Tree tree = read_xliff(source_);
    check_target_language(tree, options_.target_language);
    Scan scan = Scanner(tree, options_.max_entries).scan(tree.doc.get());
    stats_ = scan.stats;
    texts_.reserve(scan.slots.size());
    for (const Slot& slot : scan.slots) texts_.push_back(source_text(slot.source));
  }

  const std::vector<CatalogText>& texts() const override { return texts_; }
  const CatalogStats& stats() const override { return stats_; }

  std::string render(const std::vector<std::string>& translations) const override {
    require_translation_count("XLIFF", translations.size(), texts_.size(), "texts");
    if (texts_.empty()) return source_;  // nothing changes: the bytes as they came
    const Tree tree = read_xliff(source_);
    const Scan scan = Scanner(tree, options_.max_entries).scan(tree.doc.get());
    if (scan.slots.size() != texts_.size()) {
      throw CatalogError("XLIFF: the file parsed differently when written back");
    }
    const std::string language = bcp47(options_.target_language);
    std::set<xmlNode*> for_review;
    for (std::size_t i = 0; i < texts_.size(); ++i) {
      write_target(scan.slots[i], texts_[i], translations[i], tree.version, language, &for_review);
    }
    xmlNode* root = xmlDocGetRootElement(tree.doc.get());
    if (tree.version == Version::k20 && !attribute(root, "trgLang")) {
      set_attribute(root, "trgLang", language);
    }
    return serialize_document(tree.doc.get(), source_);
  }

 private:
  // The target of one slot: the translation, or the source again when the translation does not
  // fit (no public count of those: the review state marks them in the file). `for_review`: the
  // elements whose state says review, which a unit's later segment does not turn "translated".
  void write_target(Slot slot, const CatalogText& text, const std::string& translation,
                    Version version, const std::string& language,
                    std::set<xmlNode*>* for_review) const {
    xmlNode* unit_source = slot.source;
    bool segment_target_added = false;
    if (slot.unit != nullptr) {
      unit_source = child_element(slot.unit, view(slot.source->ns->href), "source");
      if (slot.target == nullptr)
        slot.target = segment_target(slot, version, &segment_target_added);
    }
    std::string file_language;
    if (version == Version::k12 && slot.file != nullptr) {
      std::optional<std::string> named = attribute(slot.file, "target-language");
      if (!named) set_attribute(slot.file, "target-language", language);
      file_language = named.value_or(language);
    }
    const EmptyTarget empty = empty_target(slot, version);
    xmlNode* target = empty.target;
    const ExpectedInline source_inline = expected_inline(slot.source, version);
    // The source's blank edges around the translation's words (a fragment writer may add a
    // newline after a single root element; layout belongs to the file, not to the text).
    std::string_view words = translation;
    words.remove_prefix(leading_space(words).size());
    words.remove_suffix(trailing_space(words).size());
    const std::string_view leading = leading_space(text.text);
    const std::string_view trailing =
        text.text.size() == leading.size() ? std::string_view() : trailing_space(text.text);
    std::string content;
    if (!words.empty()) content.append(leading).append(words).append(trailing);
    bool kept_source = false;
    if (!fill(target, content, text.format, version, &source_inline)) {
      kept_source = true;
      if (!fill(target, text.text, text.format, version, nullptr)) {
        // The source cannot be read in the target's context (a prefix declared on <source>
        // itself): the unit stays untranslated.
        for (xmlNode* added : {empty.indent, empty.added ? target : nullptr}) {
          if (added == nullptr) continue;
          xmlUnlinkNode(added);
          xmlFreeNode(added);
        }
        return;
      }
    }
    // 1.2: the <target>, which holds a segment's mark (maybe inside a <g>); 2.0: the <segment>.
    xmlNode* state_holder = version == Version::k20 ? slot.segment : target;
    while (version == Version::k12 &&
           !is_element(state_holder, view(unit_source->ns->href), "target")) {
      state_holder = state_holder->parent;
    }
    const bool review =
        options_.mark_for_review || kept_source || for_review->contains(state_holder);
    if (review) for_review->insert(state_holder);
    if (empty.added || segment_target_added) {
      xmlNode* added = version == Version::k20 ? target : state_holder;
      if (version == Version::k12 &&
          xmlHasNsProp(unit_source, xml("lang"), XML_XML_NAMESPACE) != nullptr) {
        xmlNodeSetLang(added, xml(file_language.c_str()));
      }
      // xml:space on the source holds for the source alone: the target says it again, or a
      // tool may collapse the blanks it kept ("  Open   the file.  ").
      const libxml::StringPtr space(xmlGetNsProp(unit_source, xml("space"), XML_XML_NAMESPACE));
      if (space != nullptr) xmlNodeSetSpacePreserve(added, view(space.get()) == "preserve" ? 1 : 0);
    }
    if (version == Version::k12) {
      set_attribute(state_holder, "state", review ? "needs-review-translation" : "translated");
    } else {
      set_attribute(state_holder, "state", review ? "initial" : "translated");
      // A subState qualifies the state it came with, which this one replaces.
      if (review) {
        set_attribute(state_holder, "subState", std::string(kOwnReview));
      } else {
        xmlUnsetProp(state_holder, xml("subState"));
      }
    }
  }

  std::string source_;
  CatalogOptions options_;
  std::vector<CatalogText> texts_;
  CatalogStats stats_;
};

}  // namespace

std::unique_ptr<Catalog> parse_xliff_catalog(std::string_view bytes,
                                             const CatalogOptions& options) {
  return std::make_unique<XliffCatalog>(bytes, options);
}

}  // namespace rpt::documents
