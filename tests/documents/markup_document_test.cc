// MarkupDocument: units, trees kept, translations written back, fallbacks, hostile input.
// Trees are compared by walking both libxml2 trees (names, attributes, decoded text, comments,
// processing instructions, CDATA, doctype), never by comparing serialized bytes.
#include "documents/markup_document.h"

#include <gtest/gtest.h>
#include <libxml/HTMLparser.h>
#include <libxml/parser.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "documents/document.h"
#include "spans/protected_spans.h"

namespace rpt::documents {
namespace {

using Strings = std::vector<std::string>;

struct FreeDoc {
  void operator()(xmlDoc* doc) const { xmlFreeDoc(doc); }
};
using DocPtr = std::unique_ptr<xmlDoc, FreeDoc>;

// Parsed as MarkupDocument parses (HTML repaired, XML strict).
DocPtr parse_tree(std::string_view text, MarkupKind kind) {
  if (kind == MarkupKind::kHtml) {
    return DocPtr(htmlReadMemory(text.data(), static_cast<int>(text.size()), nullptr, "UTF-8",
                                 HTML_PARSE_RECOVER | HTML_PARSE_NONET | HTML_PARSE_NOERROR |
                                     HTML_PARSE_NOWARNING | HTML_PARSE_NODEFDTD |
                                     HTML_PARSE_IGNORE_ENC));
  }
  return DocPtr(xmlReadMemory(text.data(), static_cast<int>(text.size()), nullptr, "UTF-8",
                              XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING));
}

std::string str(const xmlChar* text) {
  return text == nullptr ? std::string() : reinterpret_cast<const char*>(text);
}

std::string attribute_text(const xmlAttr* a) {
  std::string value;
  for (const xmlNode* part = a->children; part != nullptr; part = part->next) {
    if (part->type == XML_ENTITY_REF_NODE) {
      value.append("&").append(str(part->name)).append(";");
    } else {
      value += str(part->content);
    }
  }
  return value;
}

// What a tree dump does with text: `translate` is applied to the text and translatable
// attributes that MarkupDocument translates (the spec of what is left untouched, restated).
struct DumpRules {
  MarkupKind kind = MarkupKind::kHtml;
  std::function<std::string(const std::string&)> translate = [](const std::string& s) { return s; };
  Strings ignore_tags;
};

bool untouched_element(const xmlNode* e, const DumpRules& rules) {
  const std::string name = str(e->name);
  const Strings html_defaults = {"script", "style", "code", "pre",      "textarea", "kbd",
                                 "samp",   "svg",   "math", "template", "tt",       "var"};
  if (rules.kind == MarkupKind::kHtml &&
      std::find(html_defaults.begin(), html_defaults.end(), name) != html_defaults.end()) {
    return true;
  }
  if (std::find(rules.ignore_tags.begin(), rules.ignore_tags.end(), name) !=
      rules.ignore_tags.end()) {
    return true;
  }
  for (const xmlAttr* a = e->properties; a != nullptr; a = a->next) {
    if (str(a->name) == "translate" && attribute_text(a) == "no") return true;
    if (rules.kind == MarkupKind::kHtml && str(a->name) == "class") {
      std::istringstream classes(attribute_text(a));
      std::string one;
      while (classes >> one) {
        if (one == "notranslate") return true;
      }
    }
  }
  return false;
}

bool translatable_attribute(const xmlNode* e, const xmlAttr* a, const DumpRules& rules) {
  if (rules.kind != MarkupKind::kHtml) return false;
  const std::string name = str(a->name);
  if (name == "title" || name == "alt" || name == "placeholder" || name == "aria-label") {
    return true;
  }
  if (name != "value" || str(e->name) != "input") return false;
  for (const xmlAttr* t = e->properties; t != nullptr; t = t->next) {
    if (str(t->name) == "type") {
      const std::string type = attribute_text(t);
      return type == "submit" || type == "button" || type == "reset";
    }
  }
  return false;
}

// One line per node; adjacent text nodes are one text.
void dump(const xmlNode* first, bool untouched, const DumpRules& rules, int depth,
          std::string* out) {
  const std::string indent(static_cast<std::size_t>(depth) * 2, ' ');
  std::string text;
  const auto flush_text = [&] {
    if (!text.empty())
      *out += indent + "text[" + (untouched ? text : rules.translate(text)) + "]\n";
    text.clear();
  };
  for (const xmlNode* node = first; node != nullptr; node = node->next) {
    if (node->type == XML_TEXT_NODE) {
      text += str(node->content);
      continue;
    }
    flush_text();
    switch (node->type) {
      case XML_ELEMENT_NODE: {
        const bool inner_untouched = untouched || untouched_element(node, rules);
        *out += indent + "<";
        if (node->ns != nullptr) out->append("{").append(str(node->ns->href)).append("}");
        *out += str(node->name);
        for (const xmlAttr* a = node->properties; a != nullptr; a = a->next) {
          std::string value = attribute_text(a);
          if (!inner_untouched && translatable_attribute(node, a, rules)) {
            value = rules.translate(value);
          }
          // The one other change: a declared charset becomes UTF-8.
          if (str(node->name) == "meta" && value.find("charset=") != std::string::npos) {
            value = "(a charset declaration)";
          }
          out->append(" ").append(str(a->name)).append("=\"").append(value).append("\"");
        }
        *out += ">\n";
        dump(node->children, inner_untouched, rules, depth + 1, out);
        break;
      }
      case XML_COMMENT_NODE:
        *out += indent + "comment[" + str(node->content) + "]\n";
        break;
      case XML_CDATA_SECTION_NODE:
        *out += indent + "cdata[" + str(node->content) + "]\n";
        break;
      case XML_PI_NODE:
        *out += indent + "pi[" + str(node->name) + " " + str(node->content) + "]\n";
        break;
      case XML_ENTITY_REF_NODE:
        *out += indent + "&" + str(node->name) + ";\n";
        break;
      case XML_DTD_NODE: {
        const auto* dtd = reinterpret_cast<const xmlDtd*>(node);
        *out += indent + "doctype[" + str(dtd->name) + " " + str(dtd->ExternalID) + " " +
                str(dtd->SystemID) + "]\n";
        break;
      }
      default:
        *out += indent + "node type " + std::to_string(node->type) + "\n";
    }
  }
  flush_text();
}

// A fragment is dumped as the content of a container of the test's own (HTML inside a body,
// XML as the root), parsed as a document otherwise.
std::string dump_tree(std::string_view text, const DumpRules& rules, bool fragment = false) {
  std::string wrapped(text);
  if (fragment) {
    wrapped = rules.kind == MarkupKind::kHtml ? "<html><body><test-root>" + wrapped
                                              : "<test-root>" + wrapped + "</test-root>";
  }
  const DocPtr doc = parse_tree(wrapped, rules.kind);
  if (doc == nullptr) return "(no document)";
  xmlNode* first = doc->children;
  if (fragment) {
    while (first != nullptr && str(first->name) != "test-root") {
      first = first->type == XML_ELEMENT_NODE ? first->children : first->next;
    }
    if (first == nullptr) return "(no fragment)";
    first = first->children;
  }
  std::string out;
  dump(first, false, rules, 0, &out);
  return out;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

std::string fixture(const std::string& name) {
  return read_file(std::string(RPT_SOURCE_DIR) + "/tests/fixtures/documents/" + name);
}

// Upper-cases (ASCII) every character outside tags and character references.
std::string uppercase_translator(std::string_view unit) {
  std::string out;
  char inside = 0;  // '<' in a tag, '&' in a reference
  for (const char c : unit) {
    if (inside == 0 && (c == '<' || c == '&')) inside = c;
    out += inside != 0 ? c : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if ((inside == '<' && c == '>') || (inside == '&' && c == ';')) inside = 0;
  }
  return out;
}

std::string ascii_upper(const std::string& text) {
  std::string out = text;
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

Strings uppercase_all(const Strings& units) {
  Strings out;
  for (const std::string& unit : units) out.push_back(uppercase_translator(unit));
  return out;
}

// The first differing line, not a diff of the whole dumps (gtest's diff of two large pages
// takes memory quadratic in their lines).
void expect_same_dump(const std::string& actual, const std::string& expected) {
  if (actual == expected) return;
  std::istringstream a(actual);
  std::istringstream e(expected);
  std::string line_a;
  std::string line_e;
  for (int line = 1;; ++line) {
    const bool more_a = static_cast<bool>(std::getline(a, line_a));
    const bool more_e = static_cast<bool>(std::getline(e, line_e));
    if (!more_a && !more_e) return;
    if (more_a != more_e || line_a != line_e) {
      ADD_FAILURE() << "tree dumps differ at line " << line << ":\n  actual:   " << line_a
                    << "\n  expected: " << line_e;
      return;
    }
  }
}

// Identity render keeps the tree; the uppercase translator changes exactly the translated text.
void expect_tree_kept_and_only_text_changed(const std::string& source,
                                            const MarkupOptions& options) {
  const MarkupDocument document = MarkupDocument::parse(source, options);
  DumpRules same;
  same.kind = options.kind;
  same.ignore_tags = options.ignore_tags;
  const bool fragment = document.is_fragment();
  const MarkupDocument::Rendered identity = document.render(document.units());
  EXPECT_EQ(identity.units_kept_as_source, 0);
  expect_same_dump(dump_tree(identity.text, same, fragment), dump_tree(source, same, fragment));
  EXPECT_EQ(MarkupDocument::parse(identity.text, options).is_fragment(), fragment);

  const MarkupDocument::Rendered upper = document.render(uppercase_all(document.units()));
  EXPECT_EQ(upper.units_kept_as_source, 0);
  DumpRules uppercased = same;
  uppercased.translate = ascii_upper;
  expect_same_dump(dump_tree(upper.text, same, fragment), dump_tree(source, uppercased, fragment));
}

MarkupOptions html() { return {}; }
MarkupOptions xml() {
  MarkupOptions options;
  options.kind = MarkupKind::kXml;
  return options;
}
MarkupOptions of_kind(MarkupKind kind) { return kind == MarkupKind::kXml ? xml() : html(); }

// libxml2's HTML writer would percent-escape URL attributes ("a b.html" as "a%20b.html"): they
// come back byte for byte, in documents and fragments.
TEST(MarkupDocument, UrlAttributesComeBackAsTheyWere) {
  const std::string fragment =
      "<a href=\"a b.html?x=1&amp;y=\xC3\xBC\">Open the file</a> <img src=\"\xC3\x9C ber.png\" "
      "alt=\"Picture\"> <form action=\"/do it\"><button>Send it</button></form>";
  for (const std::string& source :
       {fragment, "<!DOCTYPE html><html><body><p>" + fragment + "</p></body></html>"}) {
    const MarkupDocument document = MarkupDocument::parse(source, {});
    const std::string out = document.render(document.units()).text;
    EXPECT_NE(out.find("href=\"a b.html?x=1&amp;y=\xC3\xBC\""), std::string::npos) << out;
    EXPECT_NE(out.find("src=\"\xC3\x9C ber.png\""), std::string::npos) << out;
    EXPECT_NE(out.find("action=\"/do it\""), std::string::npos) << out;
    EXPECT_EQ(out.find("%20"), std::string::npos) << out;
  }
}

TEST(MarkupDocument, NestedInlineTagsStayInsideOneUnit) {
  const auto document =
      MarkupDocument::parse("<p>Click <b>the <i>big</i> button</b> &amp; wait.</p>", html());
  EXPECT_EQ(document.units(), Strings{"Click <b>the <i>big</i> button</b> &amp; wait."});
  // The span recognizer protects every tag of the unit.
  const auto spans = find_protected_spans(document.units()[0]);
  EXPECT_EQ(std::count_if(spans.begin(), spans.end(),
                          [](const ProtectedSpan& s) { return s.kind == SpanKind::kTag; }),
            4);
  // Siblings may move and text may move across tags; nesting is kept.
  const auto rendered = document.render({"<b>Le <i>gros</i> bouton</b>: cliquez &amp; attendez."});
  EXPECT_EQ(rendered.units_kept_as_source, 0);
  EXPECT_EQ(rendered.text, "<p><b>Le <i>gros</i> bouton</b>: cliquez &amp; attendez.</p>");
}

TEST(MarkupDocument, SameTagNestedInItself) {
  const auto document =
      MarkupDocument::parse("<p>p<sub><sub>0</sub></sub> and <b>x</b> <b>y</b></p>", html());
  EXPECT_EQ(document.units(), Strings{"p<sub><sub>0</sub></sub> and <b>x</b> <b>y</b>"});
  EXPECT_EQ(document.render(document.units()).units_kept_as_source, 0);
  const auto rendered = document.render({"<b>Y</b> <b>X</b> et p<sub><sub>0</sub></sub>"});
  EXPECT_EQ(rendered.units_kept_as_source, 0);
  EXPECT_EQ(rendered.text, "<p><b>Y</b> <b>X</b> et p<sub><sub>0</sub></sub></p>");
  EXPECT_EQ(document.render({"p<sub><sub>0</sub> <b>x</b></sub> <b>y</b>"}).units_kept_as_source,
            1);  // <b> moved into <sub>
}

TEST(MarkupDocument, WhitespaceAroundUnitStaysOutside) {
  const auto document =
      MarkupDocument::parse("<div>\n  <p>\n    Hello <b>world</b>  \n  </p>\n</div>", html());
  EXPECT_EQ(document.units(), Strings{"Hello <b>world</b>"});
  EXPECT_EQ(document.render({"Hallo <b>Welt</b>"}).text,
            "<div>\n  <p>\n    Hallo <b>Welt</b>  \n  </p>\n</div>");
}

TEST(MarkupDocument, BlocksInsideBlocksAreTheirOwnUnits) {
  const auto document = MarkupDocument::parse(
      "<div>Intro <span>text</span><div>Nested block</div>tail <a href=\"#\"><p>Linked "
      "block</p></a></div>",
      html());
  EXPECT_EQ(document.units(),
            (Strings{"Intro <span>text</span>", "Nested block", "tail", "Linked block"}));
}

// A line break in a block ends a unit as a block does; each side is translated alone.
TEST(MarkupDocument, LineBreaksEndAUnit) {
  const auto document = MarkupDocument::parse("<p>Open the file<br>Save the file</p>", html());
  EXPECT_EQ(document.units(), (Strings{"Open the file", "Save the file"}));
  EXPECT_EQ(document.render({"Die Datei öffnen", "Die Datei speichern"}).text,
            "<p>Die Datei öffnen<br>Die Datei speichern</p>");
  const auto spaced =
      MarkupDocument::parse("<div>Open <b>it</b> <br/>\n  Save it<BR>Quit<hr>Done</div>", html());
  EXPECT_EQ(spaced.units(), (Strings{"Open <b>it</b>", "Save it", "Quit", "Done"}));
  EXPECT_EQ(spaced.render({"A <b>B</b>", "C", "D", "E"}).text,
            "<div>A <b>B</b> <br>\n  C<br>D<hr>E</div>");
  // A break inside an inline element is one of the unit's tags.
  EXPECT_EQ(MarkupDocument::parse("<p><a href=\"x\">Open<br>Save</a> now</p>", html()).units(),
            Strings{"<a href=\"x\">Open<br/>Save</a> now"});
  // XML has no line-break element.
  EXPECT_EQ(MarkupDocument::parse("<doc>Open<br/>Save</doc>", xml()).units(),
            Strings{"Open<br/>Save"});
}

TEST(MarkupDocument, IgnoredInlineContentIsAPlaceholderKeptVerbatim) {
  const auto document =
      MarkupDocument::parse("<p>Run <code>make &lt;all&gt;</code> now<!-- note -->.</p>", html());
  ASSERT_EQ(document.units(), Strings{"Run <x id=\"1\"/> now<x id=\"2\"/>."});
  const auto spans = find_protected_spans(document.units()[0]);
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_EQ(spans[0].kind, SpanKind::kTag);
  const auto rendered = document.render({"<x id=\"2\"/>Lancez <x id=\"1\"/> maintenant."});
  EXPECT_EQ(rendered.units_kept_as_source, 0);
  EXPECT_EQ(rendered.text, "<p><!-- note -->Lancez <code>make &lt;all&gt;</code> maintenant.</p>");
}

// A manual's parameter names (<var>) and typewriter identifiers (<tt>) are code: a model
// translated `<var>argtypes</var>` to `<var>Argumente</var>` in libffi's manual.
TEST(MarkupDocument, VariablesAndTypewriterTextAreCode) {
  const auto document = MarkupDocument::parse(
      "<p><var>argtypes</var> must have <var>nargs</var> elements; see <tt>ffi_cif</tt>.</p>",
      html());
  ASSERT_EQ(document.units(),
            Strings{"<x id=\"1\"/> must have <x id=\"2\"/> elements; see <x id=\"3\"/>."});
  EXPECT_EQ(
      document.render(uppercase_all(document.units())).text,
      "<p><var>argtypes</var> MUST HAVE <var>nargs</var> ELEMENTS; SEE <tt>ffi_cif</tt>.</p>");
}

TEST(MarkupDocument, UntouchedElementsAndIgnoreTags) {
  MarkupOptions options = html();
  options.ignore_tags = {"Address"};
  const auto document = MarkupDocument::parse(
      "<script>alert('Hello')</script><style>p{}</style><pre>Pre text</pre>"
      "<p translate=\"no\">Brand</p><p class=\"a notranslate\">Also</p>"
      "<p class=\"notranslated\">Translated</p><address>Street 1</address>"
      "<textarea>Default</textarea><p>Kept <span translate=\"no\">Name</span>.</p>",
      options);
  EXPECT_EQ(document.units(), (Strings{"Translated", "Kept <x id=\"1\"/>."}));
}

TEST(MarkupDocument, TranslatableAttributesAreUnits) {
  const auto document = MarkupDocument::parse(
      "<p title=\"Paragraph\">See <a href=\"x.html\" title=\"The X page\">x</a>.</p>"
      "<img src=\"cat.png\" alt=\"A cat\"><input type=\"submit\" value=\"Send\">"
      "<input type=\"text\" value=\"user input\" placeholder=\"Your name\">"
      "<button aria-label=\"Close dialog\">X</button><meta name=\"description\" content=\"Kept\">",
      html());
  EXPECT_EQ(document.units(),
            (Strings{"See <a href=\"x.html\" title=\"The X page\">x</a>.", "The X page",
                     "Paragraph", "A cat", "Send", "Your name", "X", "Close dialog"}));
  Strings translations = uppercase_all(document.units());
  const std::string out = document.render(translations).text;
  EXPECT_NE(out.find("<p title=\"PARAGRAPH\">SEE <a href=\"x.html\" title=\"THE X PAGE\">X</a>."),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("value=\"user input\" placeholder=\"YOUR NAME\""), std::string::npos) << out;
  EXPECT_NE(out.find("content=\"Kept\""), std::string::npos) << out;
}

TEST(MarkupDocument, TextWithoutLettersOrDigitsIsNoUnit) {
  const auto document = MarkupDocument::parse(
      "<p>   </p><p>&mdash; &nbsp;</p><p>42</p><p><img src=\"a.png\"></p><p>é</p>", html());
  EXPECT_EQ(document.units(), (Strings{"42", "é"}));
}

// A bracketed link after a no-break space is a segment of its own (docs/documents.md, "What is
// layout"): the no-break space and the brackets come back as they were, whatever the model writes
// (en-fr gave "Voir également [<a href=\"i.html\">Index</a>]]", the no-break space a space).
TEST(MarkupDocument, BracketedLinkAfterANoBreakSpaceKeepsItsLayout) {
  DocumentOptions options;
  options.format = TextFormat::kHtml;
  const Document document =
      Document::parse("<p>See also&nbsp; [<a href=\"i.html\">Index</a>]</p>", options);
  ASSERT_EQ(document.parts().size(), 1u);
  const SegmentedText& part = document.parts()[0];
  EXPECT_EQ(part.segments, (Strings{"See also", "Index"}));
  const std::string rendered =
      document.render({join_segments(part, {"Siehe auch", "Verzeichnis"})}).text;
  EXPECT_NE(rendered.find("<p>Siehe auch\u00A0 [<a href=\"i.html\">Verzeichnis</a>]</p>"),
            std::string::npos)
      << rendered;
}

TEST(MarkupDocument, TranslationWhoseTagsDoNotFitKeepsTheSource) {
  const auto document =
      MarkupDocument::parse("<p>Click <b>the <i>big</i> button</b>.</p><p>Ok</p>", html());
  const std::string source = document.render(document.units()).text;
  for (const std::string bad : {
           "Cliquez sur le gros bouton.",                     // tags dropped
           "Cliquez <b>le <i>gros</i> bouton.",               // a closing tag missing
           "Cliquez <b>le <i>gros</i> <i>x</i> bouton</b>.",  // a tag added
           "Cliquez <b>le <i>gros</b> bouton</i>.",           // crossed
           "Cliquez <i>gros</i> <b>le bouton</b>.",           // <i> moved out of <b>
           "Cliquez <b>le <u>gros</u> bouton</b>.",           // a tag the unit lacks
           "Cliquez </b>le <i>gros</i> bouton<b>.",           // closed before opened
           "Cliquez \xC3 <b>le <i>gros</i> bouton</b>.",      // not UTF-8
       }) {
    const auto rendered = document.render({bad, "D'accord"});
    EXPECT_EQ(rendered.units_kept_as_source, 1) << bad;
    EXPECT_NE(rendered.text.find("<p>Click <b>the <i>big</i> button</b>.</p>"), std::string::npos)
        << bad;
    EXPECT_NE(rendered.text.find("<p>D'accord</p>"), std::string::npos) << bad;
  }
  // A literal '<' that is no tag is text; character references are decoded.
  const auto rendered =
      document.render({"Si a < b <b>le <i>gros</i> bouton</b> &eacute;&#233;", "Ok"});
  EXPECT_EQ(rendered.units_kept_as_source, 0);
  EXPECT_NE(rendered.text.find("<p>Si a &lt; b <b>le <i>gros</i> bouton</b> éé</p>"),
            std::string::npos)
      << rendered.text;
  // XML takes only XML characters.
  const auto xml_document = MarkupDocument::parse("<a>Hello <b>x</b></a>", xml());
  EXPECT_EQ(xml_document.render({"Hallo \x01 <b>x</b>"}).units_kept_as_source, 1);
  EXPECT_EQ(xml_document.render({"Hallo &#1; <b>x</b>"}).text, "<a>Hallo &amp;#1; <b>x</b></a>");
  // Attribute units take no tags.
  const auto with_title = MarkupDocument::parse("<p title=\"Hello\">Hi</p>", html());
  EXPECT_EQ(with_title.render({"Salut", "<b>Bonjour</b>"}).units_kept_as_source, 1);
  EXPECT_THROW(with_title.render({"Salut"}), std::invalid_argument);
}

TEST(MarkupDocument, HandWrittenPageKeepsItsTree) {
  const std::string page = fixture("page.html");
  ASSERT_FALSE(page.empty());
  expect_tree_kept_and_only_text_changed(page, html());
  const auto document = MarkupDocument::parse(page, html());
  const Strings& units = document.units();
  EXPECT_NE(
      std::find(units.begin(), units.end(),
                "Run <x id=\"1\"/> as root, then <a href=\"https://example.org/?a=1&amp;b=2\" "
                "title=\"Example site\">visit the site</a>."),
      units.end());
  EXPECT_NE(std::find(units.begin(), units.end(), "Release notes &amp; changes"), units.end());
  EXPECT_NE(std::find(units.begin(), units.end(), "What’s new in <em>version 2</em>"), units.end());
  const std::string out = document.render(uppercase_all(units)).text;
  EXPECT_TRUE(out.starts_with("<!DOCTYPE html>\n<html lang=\"en\">")) << out.substr(0, 80);
  for (const char* kept :
       {"<!-- A comment that stays -->", "var message = \"Do not translate <b>this</b>\";",
        "/* Do not touch */", "<pre>  preformatted   text  </pre>", "Brand Name Stays",
        "Also stays", "<code>make install</code>", "<textarea>Default text</textarea>",
        "<meta charset=\"utf-8\">"}) {
    EXPECT_NE(out.find(kept), std::string::npos) << kept;
  }
  EXPECT_NE(out.find("CAFé NAïVE © 2024"), std::string::npos);  // ASCII upper: é stays é
}

TEST(MarkupDocument, MalformedHtmlIsRepairedNotRefused) {
  const std::string page = fixture("malformed.html");
  ASSERT_FALSE(page.empty());
  const auto document = MarkupDocument::parse(page, html());
  EXPECT_GE(document.units().size(), 5u);
  const auto rendered = document.render(uppercase_all(document.units()));
  EXPECT_EQ(rendered.units_kept_as_source, 0);
  EXPECT_NE(rendered.text.find("NEXT PARAGRAPH"), std::string::npos);
  // The repaired tree is stable: the output parses to what the input parsed to.
  expect_tree_kept_and_only_text_changed(page, html());
  for (const char* broken : {"<p>unclosed <b>bold", "</div></div>text", "<<<>>>&&&;",
                             "<a href=", "<!-- never closed", "<table><td>cell</p></table>"}) {
    const auto d = MarkupDocument::parse(broken, html());
    EXPECT_NO_THROW(d.render(d.units())) << broken;
    expect_tree_kept_and_only_text_changed(broken, html());
  }
}

// A source that does not start as a document is a fragment, and comes back as one: nothing
// added around it, its blank edges byte for byte.
TEST(MarkupDocument, HtmlFragmentComesBackAsAFragment) {
  const auto document = MarkupDocument::parse("Hello <b>world</b>", html());
  EXPECT_TRUE(document.is_fragment());
  EXPECT_EQ(document.units(), Strings{"Hello <b>world</b>"});
  EXPECT_EQ(document.render(document.units()).text, "Hello <b>world</b>");
  EXPECT_EQ(document.render({"Hallo <b>Welt</b>"}).text, "Hallo <b>Welt</b>");
  const auto empty = MarkupDocument::parse("", html());
  EXPECT_TRUE(empty.is_fragment());
  EXPECT_EQ(empty.render({}).text, "");
  EXPECT_EQ(MarkupDocument::parse(" \n\t", html()).render({}).text, " \n\t");
}

TEST(MarkupDocument, HtmlFragmentIdentityAndUppercase) {
  for (const std::string fragment : {
           "Click <b>the <i>big</i> button</b> &amp; <a href=\"x.html\" title=\"The X\">wait</a>.",
           "<p>First paragraph.</p>\n<p>Second <em>one</em>.</p>\n<ul><li>Item</li><li>Other "
           "item</li></ul>",
           "<div class=\"card\"><h2>Title</h2><img src=\"a.png\" alt=\"A cat\"> Caption</div>",
           "<td>cell outside a table</td><li>item outside a list</li><title>In body</title>",
           "Text <!-- a comment --> and <span translate=\"no\">Brand</span> end",
           "<header>Not a head</header><bodyguard>Not a body</bodyguard>",
           "<p>unclosed <b>bold",
           "</div></div>text",
           "<<<>>>&&&;",
           "<a href=",
           "<!-- never closed",
           "<table><td>cell</p></table>",
       }) {
    SCOPED_TRACE(fragment);
    const auto document = MarkupDocument::parse(fragment, html());
    EXPECT_TRUE(document.is_fragment());
    expect_tree_kept_and_only_text_changed(fragment, html());
    const std::string out = document.render(document.units()).text;
    for (const char* added : {"<html>", "<body>", "</body>", "</html>"}) {
      EXPECT_EQ(out.find(added), std::string::npos) << out;
    }
  }
  const auto document =
      MarkupDocument::parse("<p>First paragraph.</p>\n<p>Second <em>one</em>.</p>", html());
  EXPECT_EQ(document.render(uppercase_all(document.units())).text,
            "<p>FIRST PARAGRAPH.</p>\n<p>SECOND <em>ONE</em>.</p>");
}

TEST(MarkupDocument, HtmlFragmentOfTextWithEntities) {
  const auto document = MarkupDocument::parse("Tom &amp; Jerry", html());
  EXPECT_TRUE(document.is_fragment());
  EXPECT_EQ(document.units(), Strings{"Tom &amp; Jerry"});
  EXPECT_EQ(document.render(document.units()).text, "Tom &amp; Jerry");
  EXPECT_EQ(document.render({"Tom &amp; Jerry &lt;3"}).text, "Tom &amp; Jerry &lt;3");
  EXPECT_EQ(document.render(uppercase_all(document.units())).text, "TOM &amp; JERRY");
  // Named entities come out as characters, as in documents.
  EXPECT_EQ(MarkupDocument::parse("Caf&eacute; &copy; 2024", html()).render({"Café © 2024"}).text,
            "Café © 2024");
}

TEST(MarkupDocument, FragmentEdgesComeBackByteForByte) {
  const std::string fragment = "\xEF\xBB\xBF \r\n\t <p>Hello <b>x</b></p>\n\n  <p>Bye</p> \f\n";
  const auto document = MarkupDocument::parse(fragment, html());
  EXPECT_TRUE(document.is_fragment());
  EXPECT_EQ(document.units(), (Strings{"Hello <b>x</b>", "Bye"}));
  EXPECT_EQ(document.render(document.units()).text, fragment);
  EXPECT_EQ(document.render({"Hallo <b>x</b>", "Tschüss"}).text,
            "\xEF\xBB\xBF \r\n\t <p>Hallo <b>x</b></p>\n\n  <p>Tschüss</p> \f\n");
  const auto text = MarkupDocument::parse("  Hello world \n", html());
  EXPECT_EQ(text.units(), Strings{"Hello world"});
  EXPECT_EQ(text.render({"Hallo Welt"}).text, "  Hallo Welt \n");
  const auto xml_text = MarkupDocument::parse("\r\n  Hello <b>x</b>\r\n", xml());
  EXPECT_TRUE(xml_text.is_fragment());
  EXPECT_EQ(xml_text.render({"Hallo <b>x</b>"}).text, "\r\n  Hallo <b>x</b>\r\n");
}

// libxml2's document writers end with a line break; the output ends as the source does.
TEST(MarkupDocument, WholeDocumentEndsAsItsSourceDoes) {
  struct Case {
    std::string source;
    MarkupOptions options;
    Strings translations;  // empty: the units themselves
    std::string expected;  // before the ending
  };
  const Case cases[] = {
      {"<doc><p>Open the file.</p></doc>",
       xml(),
       {"Die Datei öffnen."},
       "<doc><p>Die Datei öffnen.</p></doc>"},
      {"<doc translate=\"no\"><p>Open the file.</p></doc>",
       xml(),
       {},
       "<doc translate=\"no\"><p>Open the file.</p></doc>"},
      {"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<doc/>",
       xml(),
       {},
       "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<doc/>"},
      {"<html><body><p>Open the file.</p></body></html>",
       html(),
       {"Die Datei öffnen."},
       "<html><body><p>Die Datei öffnen.</p></body></html>"},
      {"<!DOCTYPE html>\n<html><body><p>x</p></body></html>",
       html(),
       {},
       "<!DOCTYPE html>\n<html><body><p>x</p></body></html>"},
  };
  for (const Case& c : cases) {
    for (const std::string ending : {"", "\n", "\r\n", "  \n\n"}) {
      const auto document = MarkupDocument::parse(c.source + ending, c.options);
      EXPECT_FALSE(document.is_fragment()) << c.source;
      const Strings& translations = c.translations.empty() ? document.units() : c.translations;
      EXPECT_EQ(document.render(translations).text, c.expected + ending);
    }
  }
}

TEST(MarkupDocument, HtmlFragmentWithAScript) {
  const std::string fragment =
      "<p>Before</p><script>if (a < b && c </b>) { say(\"<p>Hi</p>\"); }</script>After "
      "<b>this</b>";
  const auto document = MarkupDocument::parse(fragment, html());
  EXPECT_TRUE(document.is_fragment());
  EXPECT_EQ(document.units(), (Strings{"Before", "<x id=\"1\"/>After <b>this</b>"}));
  const std::string out = document.render(uppercase_all(document.units())).text;
  EXPECT_EQ(out,
            "<p>BEFORE</p><script>if (a < b && c </b>) { say(\"<p>Hi</p>\"); }</script>AFTER "
            "<b>THIS</b>");
  expect_tree_kept_and_only_text_changed(fragment, html());
}

TEST(MarkupDocument, WhatIsADocumentAndWhatAFragment) {
  for (const char* whole :
       {"<!DOCTYPE html><p>x</p>", "<!doctype html>\n<title>T</title>", "<html><p>x</p></html>",
        "  <HTML lang=\"en\">x", "<head><title>T</title></head>", "<body>x</body>",
        "<BODY\n class=\"a\">x", "\xEF\xBB\xBF<!-- c --> <html>x",
        "<?xml version=\"1.0\"?>\n<!DOCTYPE html><html>x</html>"}) {
    const auto document = MarkupDocument::parse(whole, html());
    EXPECT_FALSE(document.is_fragment()) << whole;
    EXPECT_NE(document.render(document.units()).text.find("<html"), std::string::npos) << whole;
  }
  for (const char* fragment : {"x", "<p>x</p>", "<header>x</header>", "<htmlx>x</htmlx>",
                               "<!-- c -->x<html>y", "<div><body>x</body></div>"}) {
    EXPECT_TRUE(MarkupDocument::parse(fragment, html()).is_fragment()) << fragment;
  }
}

// Content that a stray end tag moves out of the container is kept, after the fragment's; after
// </body> or </html> it parses back to the same units.
TEST(MarkupDocument, HtmlFragmentContentAfterStrayEndTagsIsKept) {
  for (const std::string fragment :
       {"a</body>b</html>c", "<p>a</p></body><p>b</p>", "</html>a<p>b</p>", "a</rpt-fragment>b"}) {
    const auto document = MarkupDocument::parse(fragment, html());
    const Strings upper = uppercase_all(document.units());
    const std::string out = document.render(upper).text;
    EXPECT_EQ(out.find("<body"), std::string::npos) << fragment << " -> " << out;
    EXPECT_EQ(out.find("<html"), std::string::npos) << fragment << " -> " << out;
    EXPECT_TRUE(MarkupDocument::parse(out, html()).is_fragment()) << fragment << " -> " << out;
    EXPECT_NE(out.find('A'), std::string::npos) << fragment << " -> " << out;
    EXPECT_NE(out.find('B'), std::string::npos) << fragment << " -> " << out;
    if (fragment.find("rpt-fragment") == std::string::npos) {
      EXPECT_EQ(MarkupDocument::parse(out, html()).units(), upper) << fragment << " -> " << out;
    }
  }
}

TEST(MarkupDocument, XmlFragmentWithoutASingleRoot) {
  const auto text = MarkupDocument::parse("Hello <b>x</b> &amp; <i>y</i>", xml());
  EXPECT_TRUE(text.is_fragment());
  EXPECT_EQ(text.units(), Strings{"Hello <b>x</b> &amp; <i>y</i>"});
  EXPECT_EQ(text.render(text.units()).text, "Hello <b>x</b> &amp; <i>y</i>");
  EXPECT_EQ(text.render({"Hallo <i>y</i> <b>x</b>"}).text, "Hallo <i>y</i> <b>x</b>");

  const std::string siblings =
      "<item id=\"1\">First <em>one</em></item>\n<item id=\"2\">Second</item><!-- c --><?pi x?>"
      "<![CDATA[<raw>]]>";
  const auto document = MarkupDocument::parse(siblings, xml());
  EXPECT_TRUE(document.is_fragment());
  EXPECT_EQ(document.units(), (Strings{"First <em>one</em>", "Second"}));
  EXPECT_EQ(document.render(document.units()).text, siblings);
  EXPECT_EQ(document.render(uppercase_all(document.units())).text,
            "<item id=\"1\">FIRST <em>ONE</em></item>\n<item id=\"2\">SECOND</item><!-- c -->"
            "<?pi x?><![CDATA[<raw>]]>");
  expect_tree_kept_and_only_text_changed(siblings, xml());

  // A single root is a document, as before; so is empty input now an empty fragment.
  EXPECT_FALSE(MarkupDocument::parse("<a>x</a>", xml()).is_fragment());
  EXPECT_EQ(MarkupDocument::parse("", xml()).render({}).text, "");
  EXPECT_EQ(MarkupDocument::parse("<a/><b/>", xml()).render({}).text, "<a/><b/>");
}

TEST(MarkupDocument, OtherDeclaredCharsetBecomesUtf8) {
  const auto document = MarkupDocument::parse(
      "<html><head><meta http-equiv=\"Content-Type\" content=\"text/html; "
      "charset=iso-8859-1\"></head><body><p>Café</p></body></html>",
      html());
  const std::string out = document.render(document.units()).text;
  EXPECT_NE(out.find("charset=UTF-8"), std::string::npos) << out;
  EXPECT_NE(out.find("Café"), std::string::npos) << out;
}

// HTML5's form, which libxml2 2.9's meta-encoding functions do not know: the page was written
// in UTF-8 under its old charset="windows-1252", which browsers read as mojibake.
TEST(MarkupDocument, Html5MetaCharsetBecomesUtf8) {
  for (const char* declaration : {"<meta charset=\"windows-1252\">", "<META CHARSET=iso-8859-1>"}) {
    const auto document = MarkupDocument::parse(
        std::string("<!DOCTYPE html><html><head>") + declaration +
            "<title>Caf\u00e9</title></head><body><p>Open the file.</p></body></html>",
        html());
    const std::string out = document.render(document.units()).text;
    EXPECT_NE(out.find("charset=\"UTF-8\""), std::string::npos) << out;
    EXPECT_EQ(out.find("1252"), std::string::npos) << out;
    EXPECT_EQ(out.find("8859"), std::string::npos) << out;
    EXPECT_NE(out.find("Caf\u00e9"), std::string::npos) << out;
  }
  // Already UTF-8 (any case): untouched, byte for byte.
  const std::string utf8 =
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"></head><body><p>Hi</p></body></html>";
  const auto document = MarkupDocument::parse(utf8, html());
  EXPECT_EQ(document.render(document.units()).text, utf8);
}

// A page translated from en to de still said lang="en" (screen readers, hyphenation and spell
// checkers read it as English). The root's declaration now names the translation's language;
// one of the same language, elements inside, fragments and roots without one are untouched.
TEST(MarkupDocument, RootLanguageBecomesTheTranslations) {
  MarkupOptions options = html();
  options.target_language = "de";
  const auto render = [&options](const std::string& source) {
    const auto document = MarkupDocument::parse(source, options);
    return document.render(document.units()).text;
  };
  EXPECT_EQ(render("<!DOCTYPE html>\n<html lang=\"en\"><body><p lang=\"fr\">Oui</p></body></html>"),
            "<!DOCTYPE html>\n<html lang=\"de\"><body><p lang=\"fr\">Oui</p></body></html>");
  EXPECT_EQ(render("<html lang=\"EN-us\" xml:lang=\"en\"><body><p>Hi</p></body></html>"),
            "<html lang=\"de\" xml:lang=\"de\"><body><p>Hi</p></body></html>");
  for (const std::string same : {"<html lang=\"de-AT\"><body><p>Hi</p></body></html>",
                                 "<html><body><p>Hi</p></body></html>", "<p lang=\"en\">Hi</p>"}) {
    EXPECT_EQ(render(same), same);
  }
  options = xml();
  options.target_language = "pt_BR";
  EXPECT_EQ(render("<doc xml:lang=\"en\"><p>Hi</p></doc>"),
            "<doc xml:lang=\"pt-BR\"><p>Hi</p></doc>");
  options.target_language = "";  // no language given: nothing changes
  EXPECT_EQ(render("<doc xml:lang=\"en\"><p>Hi</p></doc>"), "<doc xml:lang=\"en\"><p>Hi</p></doc>");
}

TEST(MarkupDocument, XmlUnitsAndTree) {
  const std::string source = fixture("document.xml");
  ASSERT_FALSE(source.empty());
  expect_tree_kept_and_only_text_changed(source, xml());
  const auto document = MarkupDocument::parse(source, xml());
  EXPECT_EQ(
      document.units(),
      (Strings{"Blue widget",
               "A <em>small</em> widget for <link ref=\"home\">your home</link> &amp; office.",
               "BW-001", "widget.open()"}));
  const std::string out = document.render(uppercase_all(document.units())).text;
  EXPECT_TRUE(
      out.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- Product catalogue -->"))
      << out;
  for (const char* kept : {"<![CDATA[if (a < b) { keep(); }]]>",
                           "<?xml-stylesheet type=", "xmlns:its=\"http://www.w3.org/2005/11/its\"",
                           "<note its:translate=\"no\">Internal note</note>", "<empty/>"}) {
    EXPECT_NE(out.find(kept), std::string::npos) << kept << "\n" << out;
  }
  MarkupOptions options = xml();
  options.ignore_tags = {"code", "sku"};
  EXPECT_EQ(MarkupDocument::parse(source, options).units().size(), 2u);
}

TEST(MarkupDocument, XmlMixedContentEntitiesAndNoDeclaration) {
  const std::string source =
      "<!DOCTYPE doc [<!ENTITY product \"Widget\">]>\n"
      "<doc><title>The &product; manual</title><p>Use <b>the</b> <![CDATA[<raw>]]> file</p></doc>";
  const auto document = MarkupDocument::parse(source, xml());
  EXPECT_EQ(document.units(),
            (Strings{"The <x id=\"1\"/> manual", "Use <b>the</b> <x id=\"1\"/> file"}));
  expect_tree_kept_and_only_text_changed(source, xml());
  const std::string out = document.render(document.units()).text;
  EXPECT_TRUE(out.starts_with("<!DOCTYPE doc [\n<!ENTITY product \"Widget\">\n]>")) << out;
}

TEST(MarkupDocument, MalformedXmlIsAnErrorWithItsLine) {
  for (const char* broken :
       {"<a><b></a>", "<a>", "<a>&undefined;</a>", "<a x='1' x='2'/>",
        "<?xml version=\"1.0\"?>\n<a>\n<b>text</c></a>", "Hello <b>x</c>", "<a/><b>",
        "<!DOCTYPE a><a/><b/>", "<a/></rpt-fragment><rpt-fragment>", "x &undefined; y"}) {
    try {
      MarkupDocument::parse(broken, xml());
      ADD_FAILURE() << "no error for " << broken;
    } catch (const MarkupError& error) {
      EXPECT_NE(std::string(error.what()).find("line"), std::string::npos) << error.what();
      EXPECT_EQ(std::string(error.what()).find("rpt-fragment"), std::string::npos) << error.what();
    }
  }
  // A fragment's error names the tag and the source's line, its blank start included.
  try {
    MarkupDocument::parse("\n\n  <p>x</p>\n<b>bold\n</c>", xml());
    ADD_FAILURE() << "no error";
  } catch (const MarkupError& error) {
    EXPECT_NE(std::string(error.what()).find("line 5: Opening and ending tag mismatch: b line 4"),
              std::string::npos)
        << error.what();
  }
}

// A '&' that starts no reference is text, as DeepL's tag handling reads "Tom & Jerry <b>live</b>"
// (rpt answered 400): escaped where libxml2 refuses the source, and written back escaped.
TEST(MarkupDocument, BareAmpersandInXmlIsText) {
  const auto text = MarkupDocument::parse("Tom & Jerry <b>live</b>, R&D &amp; &#38;", xml());
  EXPECT_EQ(text.units(), Strings{"Tom &amp; Jerry <b>live</b>, R&amp;D &amp; &amp;"});
  EXPECT_EQ(text.render(text.units()).text, "Tom &amp; Jerry <b>live</b>, R&amp;D &amp; &amp;");
  const auto document = MarkupDocument::parse("<a>Salt & pepper</a>", xml());
  EXPECT_EQ(document.render({"Salz &amp; Pfeffer"}).text, "<a>Salz &amp; Pfeffer</a>");
  // Other faults are still refused.
  EXPECT_THROW(MarkupDocument::parse("Tom & <b>x</c>", xml()), MarkupError);
  EXPECT_THROW(MarkupDocument::parse("Tom & &undefined;", xml()), MarkupError);
}

// What DeepL's tag handling v2 asks of XML: well-formed as it stands, a bare '&' refused too.
TEST(MarkupDocument, WellFormedXmlAsItStands) {
  for (const char* good : {"Press <b>Continue</b> to advance.", "<doc><p>x &amp; y</p></doc>",
                           "Tom &amp; Jerry", "<a/><b/>", "no tags at all"}) {
    EXPECT_TRUE(is_well_formed_xml(good)) << good;
  }
  for (const char* bad : {"Tom & Jerry <b>live</b>", "<p>This tag is not closed properly</a>",
                          "x &nbsp; y", "<a><b></a>"}) {
    EXPECT_FALSE(is_well_formed_xml(bad)) << bad;
  }
  EXPECT_NO_THROW(MarkupDocument::parse("Tom & Jerry <b>live</b>", xml()));  // parse() reads it
}

TEST(MarkupDocument, XmlEntityBombIsNotExpanded) {
  std::string bomb = "<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [\n<!ENTITY lol \"lol\">\n";
  for (int i = 1; i <= 9; ++i) {
    bomb += "<!ENTITY lol" + std::to_string(i) + " \"";
    const std::string previous = i == 1 ? "&lol;" : "&lol" + std::to_string(i - 1) + ";";
    for (int j = 0; j < 10; ++j) bomb += previous;
    bomb += "\">\n";
  }
  bomb += "]>\n<lolz>Laughs: &lol9;</lolz>\n";
  const auto start = std::chrono::steady_clock::now();
  try {
    const auto document = MarkupDocument::parse(bomb, xml());
    const std::string out = document.render(document.units()).text;
    EXPECT_LT(out.size(), 4 * bomb.size());
  } catch (const MarkupError& error) {
    SUCCEED() << error.what();  // libxml2 may refuse the amplification outright
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

TEST(MarkupDocument, XmlExternalEntityIsNotLoaded) {
  const std::string source =
      "<!DOCTYPE doc [<!ENTITY secret SYSTEM \"file:///etc/passwd\">]><doc>Hi &secret;</doc>";
  try {
    const auto document = MarkupDocument::parse(source, xml());
    const std::string out = document.render(document.units()).text;
    EXPECT_EQ(out.find("root:"), std::string::npos) << out;
  } catch (const MarkupError&) {
  }
}

TEST(MarkupDocument, DeepNestingIsAnErrorNotAStackOverflow) {
  for (const MarkupKind kind : {MarkupKind::kHtml, MarkupKind::kXml}) {
    std::string deep;
    for (int i = 0; i < 10000; ++i) deep += "<span>";
    deep += "deep";
    for (int i = 0; i < 10000; ++i) deep += "</span>";
    EXPECT_THROW(MarkupDocument::parse(deep, of_kind(kind)), MarkupError);
  }
  std::string shallow;  // 200 levels are fine
  for (int i = 0; i < 200; ++i) shallow += "<div>";
  shallow += "ok";
  EXPECT_EQ(MarkupDocument::parse(shallow, html()).units(), Strings{"ok"});
  MarkupOptions shallow_limit;
  shallow_limit.max_depth = 100;
  EXPECT_THROW(MarkupDocument::parse(shallow, shallow_limit), MarkupError);
}

TEST(MarkupDocument, LimitsAndInput) {
  MarkupOptions small;
  small.max_bytes = 999;
  small.max_units = 2;
  EXPECT_THROW(MarkupDocument::parse(std::string(1000, 'a'), small), MarkupError);
  EXPECT_THROW(MarkupDocument::parse("<p>a</p><p>b</p><p>c</p>", small), MarkupError);
  EXPECT_THROW(MarkupDocument::parse("<p>caf\xE9</p>", html()), MarkupError);  // Latin-1
}

TEST(MarkupDocument, ParsesOnSeveralThreadsAtOnce) {
  const std::string page = fixture("page.html");
  const std::string xml_source = fixture("document.xml");
  const auto expected = MarkupDocument::parse(page, html()).units();
  const std::string expected_out = MarkupDocument::parse(page, html()).render(expected).text;
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        const auto document = MarkupDocument::parse(page, html());
        if (document.units() != expected || document.render(expected).text != expected_out) {
          ++failures[t];
        }
        MarkupDocument::parse(xml_source, xml());
        try {
          MarkupDocument::parse("<a><b></a>", xml());
        } catch (const MarkupError&) {
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures, std::vector<int>(4, 0));
}

// Real pages Debian ships (skipped where none is installed).
TEST(MarkupDocument, RealPagesKeepTheirTree) {
  int pages = 0;
  for (const char* path :
       {"/usr/share/doc/bzip2/manual.html", "/usr/share/doc/fontconfig/fontconfig-user.html",
        "/usr/share/doc/nettle-dev/nettle.html", "/usr/share/doc/libarmadillo11/docs.html"}) {
    if (!std::filesystem::exists(path)) continue;
    ++pages;
    const std::string page = read_file(path);
    const auto document = MarkupDocument::parse(page, html());
    EXPECT_GT(document.units().size(), 50u) << path;
    expect_tree_kept_and_only_text_changed(page, html());
  }
  if (pages == 0) GTEST_SKIP() << "no Debian HTML documentation installed";
}

}  // namespace
}  // namespace rpt::documents
