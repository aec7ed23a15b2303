#include "documents/json_catalog.h"

#include <nlohmann/json.hpp>

#include <string>
#include <utility>

#include "common/text_hygiene.h"
#include "documents/translation_count.h"

namespace rpt::documents {
namespace {

using Json = nlohmann::ordered_json;  // keys written back in the file's order

// Deeper files are refused: the walk and nlohmann's writer recurse once per level.
constexpr int kMaxDepth = 64;

// The members of an entry object that are its text, the rest being what the translator reads
// (description, placeholders): Chrome's messages.json and FormatJS's extracted messages.
constexpr const char* kMessageKeys[] = {"message", "defaultMessage"};

// How the file indents, so that its translation diffs line by line against it: the blank run
// that opens its first indented line (none: written on one line, as it came).
struct Indent {
  int width = -1;  // -1: no line breaks
  char character = ' ';
};

Indent indent_of(std::string_view bytes) {
  for (std::size_t line = bytes.find('\n'); line != std::string_view::npos;
       line = bytes.find('\n', line + 1)) {
    std::size_t end = line + 1;
    while (end < bytes.size() && (bytes[end] == ' ' || bytes[end] == '\t')) ++end;
    if (end == line + 1 || end >= bytes.size() || bytes[end] == '\n' || bytes[end] == '\r') {
      continue;
    }
    return {static_cast<int>(end - line - 1), bytes[line + 1]};
  }
  return bytes.find('\n') == std::string_view::npos ? Indent{} : Indent{0, ' '};
}

class JsonCatalog : public Catalog {
 public:
  JsonCatalog(std::string_view bytes, const CatalogOptions& options)
      : options_(options), indent_(indent_of(bytes)) {
    if (!is_valid_utf8(bytes)) throw CatalogError("JSON: the file is not valid UTF-8");
    try {
      document_ = Json::parse(bytes, [](int depth, Json::parse_event_t, Json&) {
        if (depth > kMaxDepth) {
          throw CatalogError("JSON: nested deeper than " + std::to_string(kMaxDepth) + " levels");
        }
        return true;
      });
    } catch (const Json::parse_error& error) {
      throw CatalogError(std::string("JSON: ") + without_prefix(error.what()));
    }
    if (!document_.is_object() && !document_.is_array()) {
      throw CatalogError(std::string("JSON: the file is a ") + document_.type_name() +
                         ", not an object of texts");
    }
    if (is_gettext_json(document_)) {
      throw CatalogError(
          "JSON: a gettext catalogue in JSON (Jed, po2json: msgids as keys, translations as "
          "values); translate the PO file it was made from (format po)");
    }
    collect(document_, Json::json_pointer());
    stats_.entries = stats_.to_translate = static_cast<int>(texts_.size());
    ends_with_newline_ = !bytes.empty() && bytes.back() == '\n';
    crlf_ = bytes.find("\r\n") != std::string_view::npos;
  }

  const std::vector<CatalogText>& texts() const override { return texts_; }
  const CatalogStats& stats() const override { return stats_; }

  std::string render(const std::vector<std::string>& translations) const override {
    require_translation_count("JSON", translations.size(), texts_.size(), "texts");
    Json translated = document_;
    for (std::size_t i = 0; i < translations.size(); ++i) translated[paths_[i]] = translations[i];
    // ARB names its language: the translation is in the target language.
    if (translated.is_object() && translated.contains("@@locale") &&
        translated["@@locale"].is_string()) {
      translated["@@locale"] = options_.target_language;
    }
    std::string out;
    try {
      out = translated.dump(indent_.width, indent_.character, /*ensure_ascii=*/false);
    } catch (const Json::exception& error) {
      throw CatalogError(std::string("JSON: ") + without_prefix(error.what()));
    }
    if (ends_with_newline_) out.push_back('\n');
    if (!crlf_) return out;
    std::string with_crlf;  // the writer escapes line breaks in strings: these are its own
    for (const char c : out) {
      if (c == '\n') with_crlf.push_back('\r');
      with_crlf.push_back(c);
    }
    return with_crlf;
  }

 private:
  // "[json.exception.parse_error.101] parse error at line 2, ..." without the bracketed id.
  static std::string without_prefix(std::string_view message) {
    const std::size_t end = message.find("] ");
    return std::string(end == std::string_view::npos ? message : message.substr(end + 2));
  }

  // Jed and po2json write a PO file's entries as "msgid": [msgstr...] under a header keyed ""
  // (or under "locale_data"): the keys are the source, the values translations, which this
  // reading would take for the source.
  static bool is_gettext_json(const Json& document) {
    if (!document.is_object()) return false;
    if (document.contains("locale_data")) return true;
    const auto header = document.find("");
    return header != document.end() && header->is_object() &&
           (header->contains("domain") || header->contains("plural_forms") ||
            header->contains("plural-forms") || header->contains("lang"));
  }

  void add(const Json& value, const Json::json_pointer& path) {
    if (texts_.size() >= options_.max_entries) {
      throw CatalogError("JSON: more than " + std::to_string(options_.max_entries) +
                         " texts to translate");
    }
    texts_.push_back({value.get<std::string>(), TextFormat::kText});
    paths_.push_back(path);
  }

  // Every string reached through objects and arrays, in the file's order; in an entry object
  // only its message; ARB's "@" members (metadata, "@@locale") are not texts.
  void collect(const Json& value, const Json::json_pointer& path) {
    if (value.is_string()) {
      add(value, path);
      return;
    }
    if (value.is_array()) {
      for (std::size_t i = 0; i < value.size(); ++i) collect(value[i], path / i);
      return;
    }
    if (!value.is_object()) return;
    for (const char* key : kMessageKeys) {
      const auto message = value.find(key);
      if (message != value.end() && message->is_string()) {
        add(*message, path / key);
        return;
      }
    }
    for (const auto& [key, member] : value.items()) {
      if (!key.empty() && key[0] == '@') continue;
      collect(member, path / key);
    }
  }

  CatalogOptions options_;
  Indent indent_;
  Json document_;
  bool ends_with_newline_ = false;
  bool crlf_ = false;  // lines end in CR LF
  std::vector<CatalogText> texts_;
  std::vector<Json::json_pointer> paths_;
  CatalogStats stats_;
};

}  // namespace

std::unique_ptr<Catalog> parse_json_catalog(std::string_view bytes, const CatalogOptions& options) {
  return std::make_unique<JsonCatalog>(bytes, options);
}

}  // namespace rpt::documents
