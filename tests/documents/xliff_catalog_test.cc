// XLIFF 1.2 and 2.0 catalogues: which sources are texts, how targets are written (translation,
// fallback to the source, review state, language), what stays as it was, hostile and malformed
// files, and xmllint as the judge of well-formedness. Outputs are inspected through libxml2 and
// XPath; bytes are compared only where byte stability is the point.
#include <gtest/gtest.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlsave.h>
#include <libxml/xpath.h>
#include <libxml/xpathInternals.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include "documents/catalog.h"
#include "documents/document.h"

namespace rpt::documents {
namespace {

using Strings = std::vector<std::string>;

constexpr const char* kNs12 = "urn:oasis:names:tc:xliff:document:1.2";
constexpr const char* kNs20 = "urn:oasis:names:tc:xliff:document:2.0";

struct FreeDoc {
  void operator()(xmlDoc* doc) const { xmlFreeDoc(doc); }
};
using DocPtr = std::unique_ptr<xmlDoc, FreeDoc>;

std::string data_file(const std::string& name) {
  std::ifstream in(std::string(RPT_SOURCE_DIR) + "/tests/fixtures/catalogs/" + name,
                   std::ios::binary);
  EXPECT_TRUE(in) << name;
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

CatalogOptions options(bool review = true, std::string language = "de") {
  CatalogOptions result;
  result.target_language = std::move(language);
  result.mark_for_review = review;
  return result;
}

std::unique_ptr<Catalog> parse(std::string_view bytes, const CatalogOptions& opts = options()) {
  return Catalog::parse(bytes, TextFormat::kXliff, opts);
}

Strings texts_of(const Catalog& catalog) {
  Strings texts;
  for (const CatalogText& text : catalog.texts()) texts.push_back(text.text);
  return texts;
}

// A rendered file, read back with XPath (prefix x: the file's XLIFF namespace).
class Xml {
 public:
  Xml(const std::string& text, const char* ns)
      : doc_(xmlReadMemory(text.data(), static_cast<int>(text.size()), nullptr, nullptr,
                           XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING)),
        ns_(ns) {
    EXPECT_NE(doc_, nullptr) << text;
  }

  std::vector<xmlNode*> select(const std::string& path) const {
    std::vector<xmlNode*> nodes;
    if (doc_ == nullptr) return nodes;
    xmlXPathContext* context = xmlXPathNewContext(doc_.get());
    xmlXPathRegisterNs(context, reinterpret_cast<const xmlChar*>("x"),
                       reinterpret_cast<const xmlChar*>(ns_));
    xmlXPathObject* result =
        xmlXPathEvalExpression(reinterpret_cast<const xmlChar*>(path.c_str()), context);
    if (result != nullptr && result->nodesetval != nullptr) {
      for (int i = 0; i < result->nodesetval->nodeNr; ++i) {
        nodes.push_back(result->nodesetval->nodeTab[i]);
      }
    }
    xmlXPathFreeObject(result);
    xmlXPathFreeContext(context);
    return nodes;
  }

  xmlNode* one(const std::string& path) const {
    const std::vector<xmlNode*> nodes = select(path);
    EXPECT_EQ(nodes.size(), 1u) << path;
    return nodes.size() == 1 ? nodes[0] : nullptr;
  }

  // A node's children as libxml2 writes them.
  static std::string inner_of(const xmlNode* node) {
    xmlBuffer* buffer = xmlBufferCreate();
    xmlSaveCtxt* save = xmlSaveToBuffer(buffer, "UTF-8", XML_SAVE_NO_DECL);
    for (xmlNode* child = node->children; child != nullptr; child = child->next) {
      xmlSaveTree(save, child);
    }
    xmlSaveClose(save);
    std::string text(reinterpret_cast<const char*>(xmlBufferContent(buffer)),
                     static_cast<std::size_t>(xmlBufferLength(buffer)));
    xmlBufferFree(buffer);
    return text;
  }

  // The children of the one node at `path`; "<none>" when there is none.
  std::string inner(const std::string& path) const {
    const std::vector<xmlNode*> nodes = select(path);
    return nodes.size() == 1 ? inner_of(nodes[0]) : "<none>";
  }

  std::string attribute(const std::string& path, const char* name) const {
    xmlNode* node = one(path);
    if (node == nullptr) return "<none>";
    xmlChar* value = xmlGetProp(node, reinterpret_cast<const xmlChar*>(name));
    if (value == nullptr) return "<none>";
    std::string text(reinterpret_cast<const char*>(value));
    xmlFree(value);
    return text;
  }

 private:
  DocPtr doc_;
  const char* ns_;
};

std::string unit12(const std::string& id) { return "//x:trans-unit[@id='" + id + "']"; }

// What the engine does with a text: Document::parse in the text's format, each part translated
// by `translate_segment`, Document::render.
std::string engine(const CatalogText& text,
                   const std::function<std::string(const std::string&)>& translate_segment) {
  DocumentOptions document_options;
  document_options.format = text.format;
  const Document document = Document::parse(text.text, document_options);
  Strings parts;
  for (const SegmentedText& part : document.parts()) {
    Strings segments;
    for (const std::string& segment : part.segments) segments.push_back(translate_segment(segment));
    parts.push_back(join_segments(part, segments));
  }
  return document.render(parts).text;
}

std::string identity(const std::string& segment) { return segment; }

Strings engine_identity(const Catalog& catalog) {
  Strings translations;
  for (const CatalogText& text : catalog.texts()) translations.push_back(engine(text, identity));
  return translations;
}

// ---- XLIFF 1.2 ----

TEST(XliffCatalog12, ListsSourcesWithoutTargetThatMayBeTranslated) {
  const auto catalog = parse(data_file("app-1.2.xlf"));
  EXPECT_EQ(texts_of(*catalog),
            (Strings{"Hello, world & \"friends\" <3",
                     "Click <g id=\"1\">here</g> to continue<x id=\"2\"/>.", "Save changes?",
                     "<bpt id=\"1\">&lt;b&gt;</bpt>Bold<ept "
                     "id=\"1\">&lt;/b&gt;</ept> text",
                     "Open file"}));
  const std::vector<CatalogText>& texts = catalog->texts();
  EXPECT_EQ(texts[0].format, TextFormat::kText);  // only text: plain, unescaped
  EXPECT_EQ(texts[1].format, TextFormat::kXml);   // inline elements: an XML fragment
  EXPECT_EQ(texts[2].format, TextFormat::kText);
  EXPECT_EQ(texts[3].format, TextFormat::kXml);
  const CatalogStats& stats = catalog->stats();
  EXPECT_EQ(stats.entries, 6);  // translatable units: the 5 texts and "done"
  EXPECT_EQ(stats.to_translate, 5);
  EXPECT_EQ(stats.already_translated, 1);
  EXPECT_EQ(stats.not_translatable, 2);  // translate="no" on the unit, and on the group
  EXPECT_EQ(stats.plural_entries, 0);
}

TEST(XliffCatalog12, TextsAreDocumentsTheEngineGivesBackUnchanged) {
  const auto catalog = parse(data_file("app-1.2.xlf"));
  for (const CatalogText& text : catalog->texts()) {
    DocumentOptions document_options;
    document_options.format = text.format;
    EXPECT_NO_THROW(Document::parse(text.text, document_options)) << text.text;
    EXPECT_EQ(engine(text, identity), text.text);
  }
}

TEST(XliffCatalog12, IdentityTranslationsGiveTargetsEqualToSources) {
  const auto catalog = parse(data_file("app-1.2.xlf"));
  const Xml out(catalog->render(engine_identity(*catalog)), kNs12);
  for (const char* id : {"plain", "inline", "empty-target", "native", "open"}) {
    SCOPED_TRACE(id);
    EXPECT_EQ(out.inner(unit12(id) + "/x:target"), out.inner(unit12(id) + "/x:source"));
    EXPECT_EQ(out.attribute(unit12(id) + "/x:target", "state"), "needs-review-translation");
  }
  // Targets come right after their source; the others are untouched.
  EXPECT_EQ(
      out.select(unit12("plain") + "/x:source/following-sibling::*[1][self::x:target]").size(), 1u);
  EXPECT_EQ(out.inner(unit12("done") + "/x:target"), "Auf Wiedersehen.");
  EXPECT_EQ(out.attribute(unit12("done") + "/x:target", "state"), "<none>");
  EXPECT_TRUE(out.select(unit12("frozen") + "/x:target").empty());
  EXPECT_TRUE(out.select(unit12("license") + "/x:target").empty());
  EXPECT_EQ(out.attribute("//x:file", "target-language"), "de");
  // A new target has xml:lang only where its source has one.
  EXPECT_EQ(out.attribute(unit12("open") + "/x:target", "lang"), "de");
  EXPECT_EQ(out.attribute(unit12("plain") + "/x:target", "lang"), "<none>");
  EXPECT_EQ(out.select("//comment()").size(), 1u);
  EXPECT_EQ(out.inner("//x:header/x:note"), "Strings of the settings screen.");
}

TEST(XliffCatalog12, TranslationsAreWrittenAsTargets) {
  const auto catalog = parse(data_file("app-1.2.xlf"), options(/*review=*/false));
  const std::string rendered = catalog->render(
      {"Hallo, Welt & \"Freunde\" <3",
       "Klicken Sie <g id=\"1\">hier</g>, um fortzufahren<x id=\"2\"/>.", "Änderungen speichern?",
       "<bpt id=\"1\">&lt;b&gt;</bpt>Fett<ept id=\"1\">&lt;/b&gt;</ept>er Text", "Datei öffnen"});
  const Xml out(rendered, kNs12);
  EXPECT_EQ(out.inner(unit12("plain") + "/x:target"), "Hallo, Welt &amp; \"Freunde\" &lt;3");
  EXPECT_EQ(out.inner(unit12("inline") + "/x:target"),
            "Klicken Sie <g id=\"1\">hier</g>, um fortzufahren<x id=\"2\"/>.");
  EXPECT_EQ(out.inner(unit12("empty-target") + "/x:target"), "Änderungen speichern?");
  EXPECT_EQ(out.inner(unit12("native") + "/x:target"),
            "<bpt id=\"1\">&lt;b&gt;</bpt>Fett<ept id=\"1\">&lt;/b&gt;</ept>er Text");
  EXPECT_EQ(out.inner(unit12("open") + "/x:target"), "Datei öffnen");
  for (const char* id : {"plain", "inline", "empty-target", "native", "open"}) {
    EXPECT_EQ(out.attribute(unit12(id) + "/x:target", "state"), "translated") << id;
  }
  // The inline elements are XLIFF's, not elements of no namespace.
  EXPECT_EQ(out.select(unit12("inline") + "/x:target/x:g").size(), 1u);
  EXPECT_EQ(out.select(unit12("inline") + "/x:target/x:x").size(), 1u);
  // The empty <target/> was filled, not doubled.
  EXPECT_EQ(out.select(unit12("empty-target") + "/x:target").size(), 1u);
  EXPECT_NE(rendered.find("<target state=\"translated\">Änderungen speichern?</target>"),
            std::string::npos);
}

TEST(XliffCatalog12, TranslationsWhoseTagsDoNotFitKeepTheSource) {
  const auto catalog = parse(data_file("app-1.2.xlf"), options(/*review=*/false));
  const Xml out(catalog->render({
                    " \n ",                               // blank
                    "Klicken Sie <g id=\"1\">hier</g>.",  // <x id="2"/> missing
                    "Speichern <b>jetzt</b>?",            // an element the source lacks
                    "<bpt id=\"1\">&lt;strong&gt;</bpt>Fett<ept id=\"1\">&lt;/b&gt;</ept>",  // code
                    "Datei <g id=\"1\">öffnen",  // plain text
                }),
                kNs12);
  for (const char* id : {"plain", "inline", "native"}) {
    SCOPED_TRACE(id);
    EXPECT_EQ(out.inner(unit12(id) + "/x:target"), out.inner(unit12(id) + "/x:source"));
    // A copy of the source needs a translator, whatever the options say.
    EXPECT_EQ(out.attribute(unit12(id) + "/x:target", "state"), "needs-review-translation");
  }
  // A plain-text source takes any text: markup is text there, escaped.
  EXPECT_EQ(out.inner(unit12("empty-target") + "/x:target"), "Speichern &lt;b&gt;jetzt&lt;/b&gt;?");
  EXPECT_EQ(out.attribute(unit12("empty-target") + "/x:target", "state"), "translated");
  EXPECT_EQ(out.inner(unit12("open") + "/x:target"), "Datei &lt;g id=\"1\"&gt;öffnen");
}

TEST(XliffCatalog12, TagsMayMoveAndReorderButNotChangeIds) {
  const auto catalog = parse(
      "<xliff version='1.2' xmlns='urn:oasis:names:tc:xliff:document:1.2'><file "
      "source-language='en' datatype='plaintext' original='x'><body>"
      "<trans-unit id='a'><source><x id='1'/> of <x id='2'/></source></trans-unit>"
      "<trans-unit id='b'><source><x id='1'/> of <x id='2'/></source></trans-unit>"
      "<trans-unit id='c'><source><g id='1'>A</g> of <x id='2'/></source></trans-unit>"
      "<trans-unit id='d'><source><g id='1'>A</g> of <x id='2'/></source></trans-unit>"
      "</body></file></xliff>");
  const Xml out(catalog->render({"<x id=\"2\"/> von <x id=\"1\"/>",        // reordered
                                 "<x id=\"1\"/> von <x id=\"3\"/>",        // an id changed
                                 "<g id=\"1\">A</g> von <x id=\"2\"/",     // not well-formed
                                 "<g id=\"1\">A von <x id=\"2\"/></g>"}),  // moved inside
                kNs12);
  EXPECT_EQ(out.inner(unit12("a") + "/x:target"), "<x id=\"2\"/> von <x id=\"1\"/>");
  EXPECT_EQ(out.inner(unit12("b") + "/x:target"), "<x id=\"1\"/> of <x id=\"2\"/>");
  EXPECT_EQ(out.inner(unit12("c") + "/x:target"), "<g id=\"1\">A</g> of <x id=\"2\"/>");
  EXPECT_EQ(out.inner(unit12("d") + "/x:target"), "<g id=\"1\">A von <x id=\"2\"/></g>");
}

TEST(XliffCatalog12, ExistingTargetLanguageIsKeptAndPosixNamesBecomeBcp47) {
  const std::string with_language =
      "<xliff version='1.2' xmlns='urn:oasis:names:tc:xliff:document:1.2'><file "
      "source-language='en' target-language='fr-CA' datatype='plaintext' original='x'><body>"
      "<trans-unit id='a'><source xml:lang='en'>Yes</source></trans-unit></body></file></xliff>";
  const Xml kept(parse(with_language, options(true, "fr"))->render({"Oui"}), kNs12);
  EXPECT_EQ(kept.attribute("//x:file", "target-language"), "fr-CA");
  EXPECT_EQ(kept.attribute("//x:target", "lang"), "fr-CA");
  std::string without = with_language;
  without.erase(without.find(" target-language='fr-CA'"), 24);
  const Xml set(parse(without, options(true, "pt_BR.UTF-8"))->render({"Sim"}), kNs12);
  EXPECT_EQ(set.attribute("//x:file", "target-language"), "pt-BR");
  EXPECT_EQ(set.attribute("//x:target", "lang"), "pt-BR");
}

TEST(XliffCatalog12, TargetComesAfterSegSourceAndKeepsTheSourceEdges) {
  const auto catalog = parse(
      "<?xml version=\"1.0\"?>\n<xliff version=\"1.2\" "
      "xmlns=\"urn:oasis:names:tc:xliff:document:1.2\"><file source-language=\"en\" "
      "datatype=\"plaintext\" original=\"x\"><body>\n"
      "  <trans-unit id=\"a\">\n"
      "    <source>\n      One. Two.\n    </source>\n"
      "    <seg-source>\n      One. Two.\n    </seg-source>\n"
      "  </trans-unit>\n"
      "  <trans-unit id=\"b\">\n"
      "    <source><g id=\"1\">Bold</g></source>\n"
      "  </trans-unit>\n"
      "</body></file></xliff>\n");
  ASSERT_EQ(texts_of(*catalog), (Strings{"\n      One. Two.\n    ", "<g id=\"1\">Bold</g>"}));
  // The engine writes a single root element back as it came; a newline added to the
  // translation is not the target's: the target keeps the source's edges.
  EXPECT_EQ(engine(catalog->texts()[1], identity), "<g id=\"1\">Bold</g>");
  const std::string rendered = catalog->render({"Eins. Zwei.", "<g id=\"1\">Fett</g>\n"});
  const Xml out(rendered, kNs12);
  EXPECT_EQ(out.inner(unit12("a") + "/x:target"), "\n      Eins. Zwei.\n    ");
  EXPECT_EQ(out.inner(unit12("b") + "/x:target"), "<g id=\"1\">Fett</g>");
  EXPECT_EQ(
      out.select(unit12("a") + "/x:seg-source/following-sibling::*[1][self::x:target]").size(), 1u);
  // Indented as the source is.
  EXPECT_NE(rendered.find("</seg-source>\n    <target state="), std::string::npos) << rendered;
}

// Okapi, memoQ and Trados mark a unit's segments in its <seg-source> and read its target back by
// the same marks; Trados writes the target with the marks empty (an SDLXLIFF file). Before, a
// unit was translated whole into an unmarked target, and a Trados unit counted as translated.
TEST(XliffCatalog12, SegmentedUnitsAreTranslatedIntoTheTargetsMarks) {
  const std::string mark = "<mrk mtype=\"seg\" mid=";
  const auto catalog = parse(R"(<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">
<file source-language="en" datatype="plaintext" original="x"><body>
<trans-unit id="new"><source xml:lang="en">Press <x id="1"/>. Two.</source>
<seg-source><mrk mtype="seg" mid="1">Press <x id="1"/>.</mrk> <mrk mtype="seg" mid="2">Two.</mrk></seg-source>
</trans-unit>
<trans-unit id="sdl"><source>Three. Four.</source>
<seg-source><mrk mtype="seg" mid="3">Three.</mrk> <mrk mtype="seg" mid="4">Four.</mrk></seg-source>
<target><mrk mtype="seg" mid="3"/> <mrk mtype="seg" mid="4">Vier.</mrk></target>
</trans-unit>
<trans-unit id="g"><source><g id="1">Bold <x id="2"/> text.</g></source>
<seg-source><g id="1"><mrk mtype="seg" mid="5">Bold <x id="2"/> text.</mrk></g></seg-source>
</trans-unit>
<trans-unit id="done"><source>Done.</source>
<seg-source><mrk mtype="seg" mid="6">Done.</mrk></seg-source>
<target>Fertig.</target>
</trans-unit>
</body></file></xliff>
)",
                             options(/*review=*/false));
  ASSERT_EQ(texts_of(*catalog),
            (Strings{"Press <x id=\"1\"/>.", "Two.", "Three.", "Bold <x id=\"2\"/> text."}));
  EXPECT_EQ(catalog->stats().entries, 6);
  EXPECT_EQ(catalog->stats().already_translated, 2);  // mark 4, and "done" translated unmarked
  const std::string rendered =
      catalog->render({"Drücken.", "Zwei.", "Drei.", "Fett <x id=\"2\"/> Text."});
  const Xml out(rendered, kNs12);
  // Mark 1 lost its tag: the source's, and the whole target needs review.
  EXPECT_EQ(out.inner(unit12("new") + "/x:target"),
            mark + "\"1\">Press <x id=\"1\"/>.</mrk> " + mark + "\"2\">Zwei.</mrk>");
  EXPECT_EQ(out.attribute(unit12("new") + "/x:target", "state"), "needs-review-translation");
  EXPECT_EQ(out.attribute(unit12("new") + "/x:target", "lang"), "de");
  EXPECT_EQ(
      out.select(unit12("new") + "/x:seg-source/following-sibling::*[1][self::x:target]").size(),
      1u);
  EXPECT_EQ(out.inner(unit12("sdl") + "/x:target"),
            mark + "\"3\">Drei.</mrk> " + mark + "\"4\">Vier.</mrk>");
  EXPECT_EQ(out.attribute(unit12("sdl") + "/x:target", "state"), "translated");
  EXPECT_EQ(out.inner(unit12("g") + "/x:target"),
            "<g id=\"1\">" + mark + "\"5\">Fett <x id=\"2\"/> Text.</mrk></g>");
  EXPECT_EQ(out.select(unit12("g") + "/x:target/x:g/x:mrk/x:x").size(), 1u);
  EXPECT_EQ(out.inner(unit12("done") + "/x:target"), "Fertig.");
  EXPECT_EQ(parse(rendered)->stats().to_translate, 0);
  EXPECT_NE(rendered.find("</seg-source><target xml:lang=\"de\" state="), std::string::npos)
      << rendered;
}

// XLIFF 1.2 says "do not translate" of inline text with <mrk mtype="protected"> (2.0 and ITS
// with translate="no"); the en-de model wrote `Öffnet den Dialog <mrk
// mtype="protected">Save-Datei</mrk>` for it. Its content is a placeholder the model copies.
TEST(XliffCatalog12, ProtectedMarksAreNotTranslated) {
  const auto catalog = parse(R"(<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">
<file source-language="en" datatype="html" original="x"><body>
<trans-unit id="a"><source>Open the <mrk mtype="protected">Save File</mrk> dialog and <mrk mtype="term">close</mrk> it.</source></trans-unit>
</body></file></xliff>)");
  ASSERT_EQ(catalog->texts().size(), 1u);
  const CatalogText& text = catalog->texts()[0];
  Strings segments;
  engine(text, [&](const std::string& segment) {
    segments.push_back(segment);
    return segment;
  });
  EXPECT_EQ(segments,
            Strings{"Open the <x id=\"1\"/> dialog and <mrk mtype=\"term\">close</mrk> it."});
  EXPECT_EQ(engine(text, identity), text.text);
}

// Angular's ng-extract-i18n-merge and xliffmerge give every new unit a target that copies the
// source, state="new"; rpt counted all of them translated and translated nothing.
TEST(XliffCatalog12, StandInTargetsAreTranslated) {
  const auto catalog = parse(R"(<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">
<file source-language="en" datatype="html" original="ng2.template"><body>
<trans-unit id="new" datatype="html"><source>Hello <x id="INTERPOLATION"/>!</source><target state="new">Hello <x id="INTERPOLATION"/>!</target></trans-unit>
<trans-unit id="needs"><source>Save</source><target state="needs-translation">Save</target></trans-unit>
<trans-unit id="seg"><source>One. Two.</source><seg-source><mrk mtype="seg" mid="1">One.</mrk> <mrk mtype="seg" mid="2">Two.</mrk></seg-source><target state="new">One. Two.</target></trans-unit>
<trans-unit id="done"><source>Open</source><target state="translated">Öffnen</target></trans-unit>
<trans-unit id="review"><source>Close</source><target state="needs-review-translation">Schließen</target></trans-unit>
</body></file></xliff>)");
  EXPECT_EQ(texts_of(*catalog),
            (Strings{"Hello <x id=\"INTERPOLATION\"/>!", "Save", "One.", "Two."}));
  EXPECT_EQ(catalog->stats().already_translated, 2);
  const Xml out(
      catalog->render({"Hallo <x id=\"INTERPOLATION\"/>!", "Speichern", "Eins.", "Zwei."}), kNs12);
  EXPECT_EQ(out.inner(unit12("new") + "/x:target"), "Hallo <x id=\"INTERPOLATION\"/>!");
  EXPECT_EQ(out.attribute(unit12("new") + "/x:target", "state"), "needs-review-translation");
  EXPECT_EQ(out.inner(unit12("needs") + "/x:target"), "Speichern");
  EXPECT_EQ(out.inner(unit12("seg") + "/x:target"),
            "<mrk mtype=\"seg\" mid=\"1\">Eins.</mrk> <mrk mtype=\"seg\" mid=\"2\">Zwei.</mrk>");
  EXPECT_EQ(out.select("//x:target").size(), 5u);
  EXPECT_EQ(out.inner(unit12("done") + "/x:target"), "Öffnen");
  EXPECT_EQ(out.inner(unit12("review") + "/x:target"), "Schließen");
}

// As a PO file's Language: rpt-translate with en-de wrote German targets into an Xcode export
// whose target-language was "fr", without a word.
TEST(XliffCatalog, AFileForAnotherTargetLanguageIsRefused) {
  const std::string v12 =
      "<xliff version='1.2' xmlns='urn:oasis:names:tc:xliff:document:1.2'>\n<file "
      "source-language='en' datatype='plaintext' original='a'><body/></file>\n<file "
      "source-language='en' target-language='fr' datatype='plaintext' original='b'><body>"
      "<trans-unit id='a'><source>Yes</source></trans-unit></body></file></xliff>";
  try {
    parse(v12);
    FAIL() << "parsed";
  } catch (const CatalogError& error) {
    EXPECT_STREQ(error.what(), "XLIFF: line 3: target-language is fr, the target is de");
  }
  EXPECT_EQ(parse(v12, options(true, "fr_CA.UTF-8"))->texts().size(), 1u);
  const std::string v20 =
      "<xliff xmlns='urn:oasis:names:tc:xliff:document:2.0' version='2.0' srcLang='en' "
      "trgLang='FR-ca'><file id='f'><unit id='u'><segment><source>Yes</source></segment></unit>"
      "</file></xliff>";
  EXPECT_THROW(parse(v20), CatalogError);
  EXPECT_EQ(parse(v20, options(true, "fr"))->texts().size(), 1u);
}

// ---- XLIFF 2.0 ----

std::string segment20(const std::string& unit, int index) {
  return "//x:unit[@id='" + unit + "']/x:segment[" + std::to_string(index) + "]";
}

TEST(XliffCatalog20, ListsSegmentsWithoutTargetThatMayBeTranslated) {
  const auto catalog = parse(data_file("app-2.0.xlf"));
  EXPECT_EQ(texts_of(*catalog), (Strings{"Welcome to <pc id=\"1\">our site</pc>.",
                                         "You have <ph id=\"2\"/> new messages.", "Back"}));
  EXPECT_EQ(catalog->texts()[0].format, TextFormat::kXml);
  EXPECT_EQ(catalog->texts()[2].format, TextFormat::kText);
  const CatalogStats& stats = catalog->stats();
  EXPECT_EQ(stats.entries, 4);  // segments: s1, s2, u2's, u5's
  EXPECT_EQ(stats.to_translate, 3);
  EXPECT_EQ(stats.already_translated, 1);
  EXPECT_EQ(stats.not_translatable, 2);  // u3 (unit translate="no"), u4 (group's)
  for (const CatalogText& text : catalog->texts()) EXPECT_EQ(engine(text, identity), text.text);
}

TEST(XliffCatalog20, TargetsFollowSourcesAndSegmentsCarryTheState) {
  const auto catalog = parse(data_file("app-2.0.xlf"));
  const Xml identical(catalog->render(engine_identity(*catalog)), kNs20);
  for (const std::string& segment : {segment20("u1", 1), segment20("u1", 2), segment20("u5", 1)}) {
    SCOPED_TRACE(segment);
    EXPECT_EQ(identical.inner(segment + "/x:target"), identical.inner(segment + "/x:source"));
    EXPECT_EQ(identical.attribute(segment, "state"), "initial");
    EXPECT_EQ(
        identical.select(segment + "/x:source/following-sibling::*[1][self::x:target]").size(), 1u);
  }
  EXPECT_EQ(identical.attribute("/x:xliff", "trgLang"), "de");
  EXPECT_TRUE(identical.select("//x:ignorable/x:target").empty());
  EXPECT_TRUE(identical.select("//x:unit[@id='u3']//x:target").empty());
  EXPECT_TRUE(identical.select("//x:unit[@id='u4']//x:target").empty());
  EXPECT_EQ(identical.attribute(segment20("u2", 1), "state"), "<none>");

  const Xml out(parse(data_file("app-2.0.xlf"), options(/*review=*/false))
                    ->render({"Willkommen auf <pc id=\"1\">unserer Seite</pc>.",
                              "Sie haben <ph id=\"2\"/> neue Nachrichten.", "<pc id=\"1\">Zurück"}),
                kNs20);
  EXPECT_EQ(out.inner(segment20("u1", 1) + "/x:target"),
            "Willkommen auf <pc id=\"1\">unserer Seite</pc>.");
  EXPECT_EQ(out.inner(segment20("u1", 2) + "/x:target"),
            "Sie haben <ph id=\"2\"/> neue Nachrichten.");
  EXPECT_EQ(out.attribute(segment20("u1", 1), "state"), "translated");
  // Plain text: the markup-like translation is text, escaped.
  EXPECT_EQ(out.inner(segment20("u5", 1) + "/x:target"), "&lt;pc id=\"1\"&gt;Zurück");
}

TEST(XliffCatalog20, MismatchedTagsKeepTheSourceAndAnExistingTrgLangStays) {
  const auto catalog = parse(
      "<xliff xmlns='urn:oasis:names:tc:xliff:document:2.0' version='2.1' srcLang='en' "
      "trgLang='de-AT'><file id='f'><unit id='u'><segment state='initial'><source>A <sc id='1'/>b"
      "<ec startRef='1'/> <mrk id='m' translate='no'>ACME</mrk></source><target/></segment>"
      "</unit></file></xliff>",
      options(/*review=*/false));
  ASSERT_EQ(catalog->texts().size(), 1u);
  // The engine leaves translate="no" content as it was, and the tags at the segment's end
  // outside the text the model reads.
  EXPECT_EQ(engine(catalog->texts()[0], [](const std::string& s) { return "[" + s + "]"; }),
            "[A <sc id=\"1\"/>b]<ec startRef=\"1\"/> <mrk id=\"m\" translate=\"no\">ACME</mrk>");
  const Xml out(catalog->render({"A <sc id=\"1\"/>b <mrk id=\"n\">ACME</mrk>"}), kNs20);
  EXPECT_EQ(out.inner("//x:target"), out.inner("//x:source"));
  EXPECT_EQ(out.attribute("//x:segment", "state"), "initial");
  EXPECT_EQ(out.attribute("/x:xliff", "trgLang"), "de-AT");
  EXPECT_EQ(out.select("//x:target").size(), 1u);
}

TEST(XliffCatalog20, PrefixedElementsStayInTheirNamespace) {
  const auto catalog = parse(
      "<x:xliff xmlns:x='urn:oasis:names:tc:xliff:document:2.0' version='2.0' srcLang='en'>"
      "<x:file id='f'><x:unit id='u'><x:segment><x:source>A <x:ph id='1'/> b "
      "<x:pc id='2'>c</x:pc></x:source></x:segment></x:unit></x:file></x:xliff>");
  ASSERT_EQ(texts_of(*catalog), Strings{"A <x:ph id=\"1\"/> b <x:pc id=\"2\">c</x:pc>"});
  EXPECT_EQ(engine(catalog->texts()[0], identity), catalog->texts()[0].text);
  const std::string rendered = catalog->render({"<x:pc id=\"2\">C</x:pc> B <x:ph id=\"1\"/>"});
  const Xml out(rendered, kNs20);
  EXPECT_EQ(out.inner("//x:target"), "<x:pc id=\"2\">C</x:pc> B <x:ph id=\"1\"/>");
  EXPECT_EQ(out.select("//x:target/x:pc").size(), 1u);
  EXPECT_EQ(out.attribute("/x:xliff", "trgLang"), "de");
}

// Angular's ng-extract-i18n-merge (--format xlf2) gives every new segment state="initial" and a
// target that copies the source; rpt counted them translated and translated nothing. Only a copy
// is a stand-in: a different target in state initial is a translation awaiting review, and a
// copy in another state (or in none, or one rpt left for review) was kept on purpose.
TEST(XliffCatalog20, StandInTargetsAreTranslated) {
  const auto catalog = parse(
      R"(<xliff xmlns="urn:oasis:names:tc:xliff:document:2.0" version="2.0" srcLang="en" trgLang="de">
<file id="ngi18n" original="ng.template"><unit id="greet"><segment state="initial"><source>Hello <ph id="0" equiv="INTERPOLATION" disp="{{ name }}"/>!</source><target>Hello <ph id="0" equiv="INTERPOLATION" disp="{{ name }}"/>!</target></segment></unit>
<unit id="save"><segment state="initial"><source>Save</source><target>Save</target></segment></unit>
<unit id="review"><segment state="initial"><source>Open</source><target>Öffnen</target></segment></unit>
<unit id="kept"><segment state="translated"><source>OK</source><target>OK</target></segment></unit>
<unit id="nostate"><segment><source>Email</source><target>Email</target></segment></unit>
<unit id="own"><segment state="initial" subState="rpt:review"><source>Status</source><target>Status</target></segment></unit>
</file></xliff>)");
  EXPECT_EQ(texts_of(*catalog),
            (Strings{"Hello <ph id=\"0\" equiv=\"INTERPOLATION\" disp=\"{{ name }}\"/>!", "Save"}));
  EXPECT_EQ(catalog->stats().to_translate, 2);
  EXPECT_EQ(catalog->stats().already_translated, 4);
  const Xml out(
      catalog->render(
          {"Hallo <ph id=\"0\" equiv=\"INTERPOLATION\" disp=\"{{ name }}\"/>!", "Speichern"}),
      kNs20);
  EXPECT_EQ(out.inner(segment20("greet", 1) + "/x:target"),
            "Hallo <ph id=\"0\" equiv=\"INTERPOLATION\" disp=\"{{ name }}\"/>!");
  EXPECT_EQ(out.inner(segment20("save", 1) + "/x:target"), "Speichern");
  EXPECT_EQ(out.select("//x:target").size(), 6u);  // replaced in place, none added
  EXPECT_EQ(out.inner(segment20("review", 1) + "/x:target"), "Öffnen");
  EXPECT_EQ(out.inner(segment20("kept", 1) + "/x:target"), "OK");
  EXPECT_EQ(out.inner(segment20("nostate", 1) + "/x:target"), "Email");
  EXPECT_EQ(out.inner(segment20("own", 1) + "/x:target"), "Status");
}

// rpt's own targets left for review (a kept source where a translation's tags did not fit, or a
// translation that equals its source) are in state initial too: their subState tells them from
// stand-ins, so a file rpt wrote has nothing left to translate. A stand-in rpt translates loses
// the subState its state came with.
TEST(XliffCatalog20, OwnTargetsForReviewAreNoStandIns) {
  const std::string file =
      "<xliff xmlns='urn:oasis:names:tc:xliff:document:2.0' version='2.0' srcLang='en'>"
      "<file id='f'><unit id='a'><segment><source>Read <pc id='1'>this</pc>.</source></segment>"
      "</unit><unit id='b'><segment><source>OK</source></segment></unit><unit id='c'><segment "
      "state='initial' subState='ng:new'><source>Quit</source><target>Quit</target></segment>"
      "</unit></file></xliff>";
  const auto catalog = parse(file);
  ASSERT_EQ(texts_of(*catalog), (Strings{"Read <pc id=\"1\">this</pc>.", "OK", "Quit"}));
  const std::string once = catalog->render({"Lies <pc id='2'>das</pc>.", "OK", "Beenden"});
  const Xml first(once, kNs20);
  EXPECT_EQ(first.inner(segment20("a", 1) + "/x:target"),
            first.inner(segment20("a", 1) + "/x:source"));  // kept: its tags did not fit
  for (const char* unit : {"a", "b", "c"}) {
    SCOPED_TRACE(unit);
    EXPECT_EQ(first.attribute(segment20(unit, 1), "state"), "initial");
    EXPECT_EQ(first.attribute(segment20(unit, 1), "subState"), "rpt:review");
  }
  const auto again = parse(once);
  EXPECT_TRUE(again->texts().empty());
  EXPECT_EQ(again->stats().already_translated, 3);
  // Written as translated (--no-fuzzy), a stand-in's subState goes with its state.
  const Xml translated(parse(file, options(/*review=*/false))
                           ->render({"Lies <pc id='1'>das</pc>.", "OK", "Beenden"}),
                       kNs20);
  EXPECT_EQ(translated.attribute(segment20("c", 1), "state"), "translated");
  EXPECT_EQ(translated.attribute(segment20("c", 1), "subState"), "<none>");
  EXPECT_EQ(translated.attribute(segment20("a", 1), "subState"), "<none>");
}

// A code pair that is not one element may move, but its end may not come before its start:
// rpt-translate gave `Das Cookie-Dokumentation<ec startRef="1"/> vor dem Start.<sc id="1"/>`
// for `Read the <sc id="1"/>documentation<ec startRef="1"/> before you start.`, invalid XLIFF
// and, from Angular's <x id="START_LINK"/>, a </a> before its <a href> in the built app.
TEST(XliffCatalog, PairedCodesKeepTheirStartBeforeTheirEnd) {
  const auto v12 = parse(R"(<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">
<file source-language="en" datatype="html" original="x"><body>
<trans-unit id="bx"><source>Read <bx id="1" rid="1"/>this<ex id="2" rid="1"/>.</source></trans-unit>
<trans-unit id="bpt"><source>Read <bpt id="1">&lt;a&gt;</bpt>this<ept id="1">&lt;/a&gt;</ept>.</source></trans-unit>
<trans-unit id="ng"><source>Read <x id="START_LINK"/>this<x id="CLOSE_LINK"/>.</source></trans-unit>
<trans-unit id="moved"><source>Read <x id="START_LINK"/>this<x id="CLOSE_LINK"/>.</source></trans-unit>
<trans-unit id="end-only"><source>this<x id="CLOSE_LINK"/> now</source></trans-unit>
</body></file></xliff>)",
                         options(/*review=*/false));
  const Xml out12(
      v12->render({"<ex id=\"2\" rid=\"1\"/>Lies<bx id=\"1\" rid=\"1\"/> das.",
                   "<ept id=\"1\">&lt;/a&gt;</ept>Lies das<bpt id=\"1\">&lt;a&gt;</bpt>.",
                   "Lies das<x id=\"CLOSE_LINK\"/>.<x id=\"START_LINK\"/>",
                   "<x id=\"START_LINK\"/>Das<x id=\"CLOSE_LINK\"/> lesen.",
                   "<x id=\"CLOSE_LINK\"/> das jetzt"}),
      kNs12);
  for (const char* id : {"bx", "bpt", "ng"}) {
    SCOPED_TRACE(id);
    EXPECT_EQ(out12.inner(unit12(id) + "/x:target"), out12.inner(unit12(id) + "/x:source"));
    EXPECT_EQ(out12.attribute(unit12(id) + "/x:target", "state"), "needs-review-translation");
  }
  EXPECT_EQ(out12.inner(unit12("moved") + "/x:target"),
            "<x id=\"START_LINK\"/>Das<x id=\"CLOSE_LINK\"/> lesen.");
  EXPECT_EQ(out12.inner(unit12("end-only") + "/x:target"), "<x id=\"CLOSE_LINK\"/> das jetzt");

  const auto v20 =
      parse(R"(<xliff xmlns="urn:oasis:names:tc:xliff:document:2.0" version="2.0" srcLang="en">
<file id="f"><unit id="sc"><segment><source>Read <sc id="1"/>this<ec startRef="1"/>.</source></segment></unit>
<unit id="sm"><segment><source>Read <sm id="1"/>this<em startRef="1"/>.</source></segment></unit>
<unit id="moved"><segment><source>Read <sc id="1"/>this<ec startRef="1"/>.</source></segment></unit>
</file></xliff>)",
            options(/*review=*/false));
  const Xml out20(v20->render({"Lies das<ec startRef=\"1\"/>.<sc id=\"1\"/>",
                               "<em startRef=\"1\"/>Lies <sm id=\"1\"/>das.",
                               "<sc id=\"1\"/>Das<ec startRef=\"1\"/> lesen."}),
                  kNs20);
  for (const char* id : {"sc", "sm"}) {
    SCOPED_TRACE(id);
    EXPECT_EQ(out20.inner(segment20(id, 1) + "/x:target"),
              out20.inner(segment20(id, 1) + "/x:source"));
    EXPECT_EQ(out20.attribute(segment20(id, 1), "state"), "initial");
  }
  EXPECT_EQ(out20.inner(segment20("moved", 1) + "/x:target"),
            "<sc id=\"1\"/>Das<ec startRef=\"1\"/> lesen.");
  EXPECT_EQ(out20.attribute(segment20("moved", 1), "state"), "translated");
}

// xml:space="preserve" on a <source> does not reach its sibling <target>: a new target says it
// too, or a tool may collapse the blanks the translation kept.
TEST(XliffCatalog, NewTargetsPreserveSpaceAsTheirSourceDoes) {
  const Xml v12(parse(R"(<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">
<file source-language="en" datatype="plaintext" original="x"><body>
<trans-unit id="a"><source xml:space="preserve">  Open   the file.  </source></trans-unit>
<trans-unit id="b"><source>Save.</source></trans-unit>
</body></file></xliff>)")
                    ->render({"  Datei   öffnen.  ", "Speichern."}),
                kNs12);
  EXPECT_EQ(v12.attribute(unit12("a") + "/x:target", "space"), "preserve");
  EXPECT_EQ(v12.inner(unit12("a") + "/x:target"), "  Datei   öffnen.  ");
  EXPECT_EQ(v12.attribute(unit12("b") + "/x:target", "space"), "<none>");
  const Xml v20(
      parse(R"(<xliff xmlns="urn:oasis:names:tc:xliff:document:2.0" version="2.0" srcLang="en">
<file id="f"><unit id="a"><segment><source xml:space="preserve">Open <ph id="1"/>  the file.</source></segment></unit>
</file></xliff>)")
          ->render({"Öffnen <ph id=\"1\"/>  die Datei."}),
      kNs20);
  EXPECT_EQ(v20.attribute(segment20("a", 1) + "/x:target", "space"), "preserve");
}

// ---- Both ----

TEST(XliffCatalog, DocumentTranslatesTheFileThroughItsTexts) {
  for (const char* name : {"app-1.2.xlf", "app-2.0.xlf"}) {
    SCOPED_TRACE(name);
    DocumentOptions document_options;
    document_options.format = TextFormat::kXliff;
    document_options.catalog = options();
    const Document document = Document::parse(data_file(name), document_options);
    const auto catalog = parse(data_file(name));
    ASSERT_NE(document.catalog_stats(), nullptr);
    EXPECT_EQ(document.catalog_stats()->to_translate, catalog->stats().to_translate);
    Strings parts;
    for (const SegmentedText& part : document.parts()) {
      parts.push_back(join_segments(part, part.segments));
    }
    const Document::Rendered rendered = document.render(parts);
    EXPECT_EQ(rendered.parts_kept_as_source, 0);
    EXPECT_EQ(rendered.text, catalog->render(engine_identity(*catalog)));
    // Every new target is a copy of its source.
    const Xml out(rendered.text, name == std::string("app-1.2.xlf") ? kNs12 : kNs20);
    const std::vector<xmlNode*> targets = out.select("//x:target");
    EXPECT_EQ(targets.size(), catalog->texts().size() + 1);  // and the one already there
    for (xmlNode* target : targets) {
      const std::string inner = Xml::inner_of(target);
      if (inner == "Auf Wiedersehen." || inner == "Schon erledigt.") continue;
      xmlNode* source = target->prev;
      while (source != nullptr && source->type != XML_ELEMENT_NODE) source = source->prev;
      ASSERT_NE(source, nullptr);
      EXPECT_EQ(inner, Xml::inner_of(source));
    }
  }
}

TEST(XliffCatalog, RenderedFilesHaveNothingLeftToTranslate) {
  for (const char* name : {"app-1.2.xlf", "app-2.0.xlf"}) {
    SCOPED_TRACE(name);
    const auto catalog = parse(data_file(name));
    const std::string rendered =
        catalog->render(Strings(catalog->texts().size(), "<x id=\"9\"/>"));  // all fall back
    const auto again = parse(rendered);
    EXPECT_TRUE(again->texts().empty());
    EXPECT_EQ(again->stats().entries, catalog->stats().entries);
    EXPECT_EQ(again->stats().already_translated, catalog->stats().entries);
    EXPECT_EQ(again->stats().not_translatable, catalog->stats().not_translatable);
    // Nothing to translate: the bytes as they came.
    EXPECT_EQ(again->render({}), rendered);
  }
}

TEST(XliffCatalog, OnlyTheTargetsAndLanguageChangeInACanonicalFile) {
  // A file written as libxml2 writes: everything but the new target and language comes back
  // byte for byte.
  const std::string source =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<xliff xmlns=\"urn:oasis:names:tc:xliff:document:1.2\" version=\"1.2\">\n"
      "  <file original=\"a\" source-language=\"en\" datatype=\"plaintext\">\n"
      "    <body>\n"
      "      <trans-unit id=\"1\">\n"
      "        <source>Yes &amp; no</source>\n"
      "        <note from=\"dev\">Ünïcode &lt;note&gt;</note>\n"
      "      </trans-unit>\n"
      "    </body>\n"
      "  </file>\n"
      "</xliff>\n";
  std::string expected = source;
  expected.replace(expected.find("datatype=\"plaintext\">"), 21,
                   "datatype=\"plaintext\" target-language=\"de\">");
  expected.replace(expected.find("</source>\n") + 10, 0,
                   "        <target state=\"needs-review-translation\">Ja &amp; nein</target>\n");
  EXPECT_EQ(parse(source)->render({"Ja & nein"}), expected);
}

TEST(XliffCatalog, WhatLibxml2RewritesAndWhatItKeeps) {
  // Single quotes, a declaration without encoding, namespace declarations after attributes,
  // <a></a>, character references, CRLF, no newline at the end.
  const std::string source =
      "<?xml version='1.0'?>\r\n"
      "<xliff version='1.2' xmlns='urn:oasis:names:tc:xliff:document:1.2'>\r\n"
      "<file original='a' source-language='en' datatype='plaintext'><body>\r\n"
      "<trans-unit id='1'><source>caf&#233;</source><note></note></trans-unit>\r\n"
      "</body></file></xliff>";
  const std::string rendered = parse(source)->render({"Café"});
  EXPECT_EQ(rendered,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\r\n"
            "<xliff xmlns=\"urn:oasis:names:tc:xliff:document:1.2\" version=\"1.2\">\r\n"
            "<file original=\"a\" source-language=\"en\" datatype=\"plaintext\" "
            "target-language=\"de\"><body>\r\n"
            "<trans-unit id=\"1\"><source>café</source><target "
            "state=\"needs-review-translation\">Café</target><note/></trans-unit>\r\n"
            "</body></file></xliff>\r\n");
}

TEST(XliffCatalog, FilesInOtherEncodingsAreReadAndWrittenAsUtf8) {
  const std::string latin1 =
      "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n<xliff version=\"1.2\" "
      "xmlns=\"urn:oasis:names:tc:xliff:document:1.2\"><file original=\"a\" "
      "source-language=\"fr\" datatype=\"plaintext\"><body><trans-unit id=\"\xE9\"><source>"
      "Caf\xE9</source></trans-unit></body></file></xliff>\n";
  const auto catalog = parse(latin1);
  ASSERT_EQ(texts_of(*catalog), Strings{"Café"});
  const std::string rendered = catalog->render({"Café!"});
  EXPECT_NE(rendered.find("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"), std::string::npos);
  EXPECT_NE(rendered.find("<trans-unit id=\"é\"><source>Café</source><target"), std::string::npos)
      << rendered;
}

TEST(XliffCatalog, Utf16FilesAreWrittenAsUtf8WithADeclaration) {
  const std::string ascii =
      "<xliff version=\"2.0\" xmlns=\"urn:oasis:names:tc:xliff:document:2.0\" srcLang=\"en\">"
      "<file id=\"f\"><unit id=\"u\"><segment><source>Hi</source></segment></unit></file>"
      "</xliff>";
  std::string utf16 = "\xFF\xFE";
  for (const char c : ascii) utf16.append({c, '\0'});
  const auto catalog = parse(utf16);
  ASSERT_EQ(texts_of(*catalog), Strings{"Hi"});
  EXPECT_EQ(catalog->render({"Hallo"}),
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<xliff "
            "xmlns=\"urn:oasis:names:tc:xliff:document:2.0\" version=\"2.0\" srcLang=\"en\" "
            "trgLang=\"de\"><file "
            "id=\"f\"><unit id=\"u\"><segment state=\"initial\" subState=\"rpt:review\"><source>Hi"
            "</source><target>Hallo</target></segment></unit></file></xliff>\n");
}

TEST(XliffCatalog, HostileTranslationsKeepTheSource) {
  std::string units;
  for (int i = 0; i < 8; ++i) {
    units += "<unit id='" + std::to_string(i) + "'><segment><source>" +
             (i < 5 ? "A <ph id='1'/>" : "Plain") + "</source></segment></unit>";
  }
  const auto catalog = parse(
      "<xliff version='2.0' xmlns='urn:oasis:names:tc:xliff:document:2.0' srcLang='en'>"
      "<file id='f' translate='yes'>" +
          units + "</file><file id='g' translate='no'>" + units + "</file></xliff>",
      options(/*review=*/false));
  ASSERT_EQ(catalog->texts().size(), 8u);  // the second file may not be translated
  EXPECT_EQ(catalog->stats().not_translatable, 8);
  const Xml out(catalog->render({
                    "B&nbsp;<ph id=\"1\"/>",                           // undeclared entity
                    "<!DOCTYPE x [<!ENTITY a \"b\">]><ph id=\"1\"/>",  // a document type
                    "B <ph xmlns=\"urn:other\" id=\"1\"/>",            // another namespace
                    "B <ph id=\"1\"/></target><target>",               // leaving the target
                    "B \xC3<ph id=\"1\"/>",                            // not UTF-8
                    "Bad \x01 control",                                // not an XML character
                    "Not UTF-8 \xFF",                                  //
                    "&lt;fine&gt; & <b>fine</b>",                      // plain text: escaped
                }),
                kNs20);
  for (int i = 0; i < 7; ++i) {
    const std::string segment = "//x:file[@id='f']" + segment20(std::to_string(i), 1).substr(1);
    EXPECT_EQ(out.inner(segment + "/x:target"), out.inner(segment + "/x:source")) << i;
    EXPECT_EQ(out.attribute(segment, "state"), "initial") << i;
  }
  EXPECT_EQ(out.inner("//x:file[@id='f']//x:unit[@id='7']//x:target"),
            "&amp;lt;fine&amp;gt; &amp; &lt;b&gt;fine&lt;/b&gt;");
  EXPECT_TRUE(out.select("//x:file[@id='g']//x:target").empty());
}

TEST(XliffCatalog, DeepNestingIsACatalogError) {
  std::string deep =
      "<xliff version='1.2' xmlns='urn:oasis:names:tc:xliff:document:1.2'><file><body>";
  for (int i = 0; i < 300; ++i) deep += "<group>";
  for (int i = 0; i < 300; ++i) deep += "</group>";
  deep += "</body></file></xliff>";
  EXPECT_THROW(parse(deep), CatalogError);
}

TEST(XliffCatalog, BlankSourcesAreNotTexts) {
  const auto catalog = parse(
      "<xliff version='1.2' xmlns='urn:oasis:names:tc:xliff:document:1.2'><file original='a' "
      "source-language='en' datatype='plaintext'><body><trans-unit id='1'><source> </source>"
      "</trans-unit><trans-unit id='2'><source/></trans-unit><trans-unit id='3'><source><x "
      "id='1'/></source><target> </target></trans-unit></body></file></xliff>");
  EXPECT_EQ(texts_of(*catalog), Strings{"<x id=\"1\"/>"});
  EXPECT_EQ(catalog->stats().not_translatable, 2);
  EXPECT_EQ(catalog->stats().entries, 1);
  // The engine finds no words there and gives the tag back.
  EXPECT_EQ(engine(catalog->texts()[0], identity), "<x id=\"1\"/>");
  const Xml out(catalog->render({"<x id=\"1\"/>\n"}), kNs12);
  EXPECT_EQ(out.inner(unit12("3") + "/x:target"), "<x id=\"1\"/>");
}

TEST(XliffCatalog, MalformedAndUnsupportedFilesAreCatalogErrors) {
  const auto message = [](const std::string& bytes) {
    try {
      parse(bytes);
    } catch (const CatalogError& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message("<xliff version='1.2' xmlns='urn:oasis:names:tc:xliff:document:1.2'>\n"
                    "<file><body></file></xliff>"),
            "XLIFF is not well-formed XML: line 2: Opening and ending tag mismatch: body line 2 "
            "and file");
  EXPECT_EQ(message(""), "XLIFF is not well-formed XML: line 1: Document is empty");
  EXPECT_EQ(message("<xliff version='1.1' xmlns='urn:oasis:names:tc:xliff:document:1.1'/>"),
            "XLIFF version '1.1' is not supported: rpt reads XLIFF 1.2, 2.0 and 2.1");
  EXPECT_EQ(message("<xliff xmlns='urn:oasis:names:tc:xliff:document:1.2'/>"),
            "XLIFF: <xliff> has no version attribute: rpt reads XLIFF 1.2, 2.0 and 2.1");
  EXPECT_EQ(message("<xliff version='2.0' xmlns='urn:oasis:names:tc:xliff:document:1.2'/>"),
            "XLIFF 2.0: <xliff> is in the namespace 'urn:oasis:names:tc:xliff:document:1.2', not "
            "urn:oasis:names:tc:xliff:document:2.0");
  EXPECT_EQ(message("<html><body/></html>"), "XLIFF: the root element is <html>, not <xliff>");
}

TEST(XliffCatalog, DocumentTypesThatDeclareEntitiesAreRefused) {
  std::string laughs = "<?xml version=\"1.0\"?>\n<!DOCTYPE xliff [\n <!ENTITY lol \"lol\">\n";
  for (int i = 1; i < 10; ++i) {
    laughs += " <!ENTITY lol" + std::to_string(i) + " \"";
    for (int k = 0; k < 10; ++k)
      laughs += "&lol" + (i == 1 ? std::string() : std::to_string(i - 1)) + ";";
    laughs += "\">\n";
  }
  laughs +=
      "]>\n<xliff version=\"1.2\" xmlns=\"urn:oasis:names:tc:xliff:document:1.2\"><file "
      "original=\"a\" source-language=\"en\" datatype=\"plaintext\"><body><trans-unit "
      "id=\"1\"><source>&lol9;</source></trans-unit></body></file></xliff>";
  EXPECT_THROW(
      {
        try {
          parse(laughs);
        } catch (const CatalogError& error) {
          EXPECT_STREQ(error.what(),
                       "XLIFF: line 3: the document type declares an entity; entities are not "
                       "read");
          throw;
        }
      },
      CatalogError);
  // External and parameter entities too.
  EXPECT_THROW(parse("<!DOCTYPE xliff [<!ENTITY x SYSTEM \"file:///etc/passwd\">]>"
                     "<xliff version='1.2' xmlns='urn:oasis:names:tc:xliff:document:1.2'>&x;"
                     "</xliff>"),
               CatalogError);
  EXPECT_THROW(parse("<!DOCTYPE xliff [<!ENTITY % p \"\">]>"
                     "<xliff version='1.2' xmlns='urn:oasis:names:tc:xliff:document:1.2'/>"),
               CatalogError);
  // A document type that declares no entity is read (and not fetched).
  const auto catalog = parse(
      "<!DOCTYPE xliff PUBLIC \"-//XLIFF//DTD XLIFF//EN\" "
      "\"http://www.oasis-open.org/committees/xliff/documents/xliff.dtd\">"
      "<xliff version='1.2' xmlns='urn:oasis:names:tc:xliff:document:1.2'><file "
      "original='a' source-language='en' datatype='plaintext'><body><trans-unit "
      "id='1'><source>Hi</source></trans-unit></body></file></xliff>");
  EXPECT_NE(catalog->render({"Hallo"}).find("<!DOCTYPE xliff PUBLIC"), std::string::npos);
}

TEST(XliffCatalog, LimitsAndCounts) {
  CatalogOptions limited = options();
  limited.max_entries = 4;
  EXPECT_THROW(parse(data_file("app-1.2.xlf"), limited), CatalogError);  // 5 texts
  limited.max_entries = 5;
  const auto catalog = parse(data_file("app-1.2.xlf"), limited);
  EXPECT_THROW(catalog->render({"one"}), std::invalid_argument);
  EXPECT_THROW(catalog->render(Strings(6, "x")), std::invalid_argument);
  limited.max_bytes = 10;
  EXPECT_THROW(parse(data_file("app-1.2.xlf"), limited), CatalogError);
  EXPECT_THROW(parse(data_file("app-1.2.xlf"), options(true, "")), CatalogError);
  EXPECT_EQ(parse_text_format("xlf"), TextFormat::kXliff);
}

TEST(XliffCatalog, ConcurrentRendersAgree) {
  const auto catalog = parse(data_file("app-1.2.xlf"));
  const Strings translations = engine_identity(*catalog);
  const std::string expected = catalog->render(translations);
  std::vector<std::string> results(4);
  std::vector<std::thread> threads;
  for (std::string& result : results) {
    threads.emplace_back([&] {
      for (int i = 0; i < 20; ++i) result = catalog->render(translations);
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const std::string& result : results) EXPECT_EQ(result, expected);
}

// xmllint (libxml2-utils) as an outside judge of the files rpt writes: well-formed, and the
// namespace right (--noout reports namespace errors too). No XLIFF schema is installed to
// validate against.
TEST(XliffCatalog, XmllintReadsTheRenderedFiles) {
  if (std::system("xmllint --version > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "xmllint is not installed (Debian libxml2-utils): rendered XLIFF not checked";
  }
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("rpt_xliff_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  int index = 0;
  for (const char* name : {"app-1.2.xlf", "app-2.0.xlf"}) {
    for (const bool review : {true, false}) {
      const auto catalog = parse(data_file(name), options(review));
      Strings changed;
      for (const CatalogText& text : catalog->texts()) {
        changed.push_back(engine(text, [](const std::string& s) { return "«" + s + "» & <ok>"; }));
      }
      for (const Strings& translations : {engine_identity(*catalog), changed}) {
        const std::filesystem::path file = dir / (std::to_string(index++) + ".xlf");
        std::ofstream(file, std::ios::binary) << catalog->render(translations);
        const std::string command = "xmllint --noout --nonet '" + file.string() + "' 2>&1";
        EXPECT_EQ(std::system(command.c_str()), 0) << name << " " << file;
      }
    }
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace rpt::documents
