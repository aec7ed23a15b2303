// JSON resource files: which strings are texts (i18next, Chrome messages.json, FormatJS, ARB),
// the file written back with its keys, values, order and indentation, and clear errors.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "documents/catalog.h"
#include "documents/document.h"

namespace rpt::documents {
namespace {

using Strings = std::vector<std::string>;

std::unique_ptr<Catalog> parse_json(std::string_view bytes, CatalogOptions options = {}) {
  options.target_language = "de";
  return Catalog::parse(bytes, TextFormat::kJson, options);
}

Strings texts_of(const Catalog& catalog) {
  Strings texts;
  for (const CatalogText& text : catalog.texts()) texts.push_back(text.text);
  return texts;
}

Strings marked(const Catalog& catalog) {
  Strings out;
  for (const CatalogText& text : catalog.texts()) out.push_back("~" + text.text);
  return out;
}

TEST(JsonCatalog, NestedResourcesAreTranslatedInPlace) {
  const std::string i18next = R"({
  "app": {
    "title": "Save the file",
    "items_one": "{{count}} file",
    "items_other": "{{count}} files",
    "menu": ["Open", "Close"]
  },
  "empty": "",
  "retries": 3,
  "beta": true,
  "none": null,
  "a/b~c": "Keys with slashes"
}
)";
  const auto catalog = parse_json(i18next);
  EXPECT_EQ(texts_of(*catalog), (Strings{"Save the file", "{{count}} file", "{{count}} files",
                                         "Open", "Close", "", "Keys with slashes"}));
  EXPECT_EQ(catalog->stats().entries, 7);
  EXPECT_EQ(catalog->stats().to_translate, 7);
  EXPECT_EQ(catalog->render(marked(*catalog)), R"({
  "app": {
    "title": "~Save the file",
    "items_one": "~{{count}} file",
    "items_other": "~{{count}} files",
    "menu": ["~Open", "~Close"]
  },
  "empty": "~",
  "retries": 3,
  "beta": true,
  "none": null,
  "a/b~c": "~Keys with slashes"
}
)");
}

TEST(JsonCatalog, EntryObjectsGiveOnlyTheirMessage) {
  const std::string chrome = R"({
    "appName": {"message": "My app", "description": "The extension's name"},
    "greeting": {
        "message": "Hello $USER$",
        "placeholders": {"user": {"content": "$1", "example": "Tom"}}
    },
    "home.title": {"defaultMessage": "Welcome back", "description": "Header"}
})";
  const auto catalog = parse_json(chrome);
  EXPECT_EQ(texts_of(*catalog), (Strings{"My app", "Hello $USER$", "Welcome back"}));
  const nlohmann::json out = nlohmann::json::parse(catalog->render(marked(*catalog)));
  EXPECT_EQ(out["appName"]["description"], "The extension's name");
  EXPECT_EQ(out["greeting"]["message"], "~Hello $USER$");
  EXPECT_EQ(out["greeting"]["placeholders"]["user"]["example"], "Tom");
  EXPECT_EQ(out["home.title"]["defaultMessage"], "~Welcome back");
}

TEST(JsonCatalog, ArbMetadataIsKeptAndTheLocaleIsTheTarget) {
  const std::string arb =
      "{\n\t\"@@locale\": \"en\",\n\t\"title\": \"Hello\",\n\t\"@title\": {\n\t\t\"description\": "
      "\"Greeting\"\n\t}\n}";
  const auto catalog = parse_json(arb);
  EXPECT_EQ(texts_of(*catalog), (Strings{"Hello"}));
  EXPECT_EQ(catalog->render({"Hallo"}),
            "{\n\t\"@@locale\": \"de\",\n\t\"title\": \"Hallo\",\n\t\"@title\": {\n\t\t"
            "\"description\": \"Greeting\"\n\t}\n}");
}

TEST(JsonCatalog, TheFilesLayoutComesBack) {
  // On one line, CR LF, four spaces; text outside ASCII written as it is, escapes as needed.
  const auto minified = parse_json(R"({"a":"Open","b":["Save"]})");
  EXPECT_EQ(minified->render({"Öffnen ✓", "Sage \"hi\"\n"}),
            R"({"a":"Öffnen ✓","b":["Sage \"hi\"\n"]})");
  const auto crlf = parse_json("{\r\n    \"a\": \"Open\"\r\n}\r\n");
  EXPECT_EQ(crlf->render({"Öffnen"}), "{\r\n    \"a\": \"Öffnen\"\r\n}\r\n");
  const auto escaped = parse_json(R"({"a": "caf\u00e9"})");
  EXPECT_EQ(texts_of(*escaped), (Strings{"café"}));
}

TEST(JsonCatalog, OnlyTheTranslatedStringsChange) {
  // Chrome's messages.json as people write it: entries on one line beside expanded ones, a
  // space before the colon, an escaped slash and a number's own spelling in what is not a text,
  // a duplicate key (the later value is the one readers see), a BOM-less file without a final
  // newline. Only the five texts' bytes change.
  const std::string source =
      "{\n"
      "  \"ok\" : {\"message\": \"OK\", \"description\": \"Button \\/ label\"},\n"
      "  \"title\": {\n"
      "      \"message\":\"Save \\\"all\\\"\",\n"
      "      \"placeholders\": {\"n\": {\"content\": \"$1\", \"example\": 1.50}}\n"
      "  },\n"
      "  \"list\": [ \"One\" ,\"Two\", 3e2 ],\n"
      "  \"twice\": \"first\", \"twice\": \"Second\"\n"
      "}";
  const auto catalog = parse_json(source);
  EXPECT_EQ(texts_of(*catalog), (Strings{"OK", "Save \"all\"", "One", "Two", "Second"}));
  EXPECT_EQ(catalog->render({"Gut", "Alle „speichern“", "Eins", "Zwei\tZwei", "Zweite"}),
            "{\n"
            "  \"ok\" : {\"message\": \"Gut\", \"description\": \"Button \\/ label\"},\n"
            "  \"title\": {\n"
            "      \"message\":\"Alle „speichern“\",\n"
            "      \"placeholders\": {\"n\": {\"content\": \"$1\", \"example\": 1.50}}\n"
            "  },\n"
            "  \"list\": [ \"Eins\" ,\"Zwei\\tZwei\", 3e2 ],\n"
            "  \"twice\": \"first\", \"twice\": \"Zweite\"\n"
            "}");
  // The source texts written back give the file back, escapes that JSON needs included.
  EXPECT_EQ(parse_json(R"({"a": ["x\"y", "\\"], "b": "z"})")->render({"x\"y", "\\", "z"}),
            R"({"a": ["x\"y", "\\"], "b": "z"})");
}

TEST(JsonCatalog, BadFilesGetClearErrors) {
  const auto error_of = [](std::string_view bytes, CatalogOptions options = {}) -> std::string {
    try {
      parse_json(bytes, options);
    } catch (const CatalogError& error) {
      return error.what();
    }
    return "no error";
  };
  EXPECT_EQ(error_of("{\n  \"a\": \"x\",\n}"),
            "JSON: parse error at line 3, column 1: syntax error while parsing object key - "
            "unexpected '}'; expected string literal");
  EXPECT_EQ(error_of("\"just a string\""), "JSON: the file is a string, not an object of texts");
  EXPECT_EQ(error_of("{\"a\": \"\xFF\"}"), "JSON: the file is not valid UTF-8");
  std::string deep(100000, '[');
  EXPECT_EQ(error_of(deep + std::string(100000, ']')), "JSON: nested deeper than 64 levels");
  CatalogOptions few;
  few.max_entries = 2;
  EXPECT_EQ(error_of(R"(["a", "b", "c"])", few), "JSON: more than 2 texts to translate");
  EXPECT_THROW(parse_json("{}")->render({"extra"}), std::invalid_argument);
  // JupyterLab's language packs (po2json): msgids as keys, their translations as values.
  const std::string jed_refusal =
      "JSON: a gettext catalogue in JSON (Jed, po2json: msgids as keys, translations as values); "
      "translate the PO file it was made from (format po)";
  EXPECT_EQ(error_of(R"({"": {"domain": "git", "plural_forms": "nplurals=2; plural=(n != 1);"},
                        "Add": ["Hinzufügen"]})"),
            jed_refusal);
  EXPECT_EQ(error_of(R"({"locale_data": {"messages": {"": {}, "Add": [""]}}})"), jed_refusal);
}

// Through a Document: each text segmented, an ICU message by its cases.
TEST(JsonCatalog, TextsAreSegmentedAsTexts) {
  DocumentOptions options;
  options.format = TextFormat::kJson;
  options.catalog.target_language = "de";
  const Document document = Document::parse(
      R"({"files": "{n, plural, one {# file} other {# files}}", "intro": "Saved. Open it?"})",
      options);
  ASSERT_EQ(document.parts().size(), 2u);
  EXPECT_EQ(document.parts()[0].segments, (Strings{"# file", "# files"}));
  EXPECT_EQ(document.parts()[1].segments, (Strings{"Saved.", "Open it?"}));
  EXPECT_EQ(
      document.render({"{n, plural, one {# Datei} other {# Dateien}}", "Gespeichert. Öffnen?"})
          .text,
      R"({"files": "{n, plural, one {# Datei} other {# Dateien}}", "intro": "Gespeichert. Öffnen?"})");
}

}  // namespace
}  // namespace rpt::documents
