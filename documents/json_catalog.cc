#include "documents/json_catalog.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/text_hygiene.h"
#include "documents/json_string_ranges.h"
#include "documents/translation_count.h"

namespace rpt::documents {
namespace {

using Json = nlohmann::ordered_json;  // keys written back in the file's order

// Deeper files are refused: the walk and nlohmann's writer recurse once per level.
constexpr int kMaxDepth = 64;

// The members of an entry object that are its text, the rest being what the translator reads
// (description, placeholders): Chrome's messages.json and FormatJS's extracted messages.
constexpr const char* kMessageKeys[] = {"message", "defaultMessage"};

class JsonCatalog : public Catalog {
 public:
  JsonCatalog(std::string_view bytes, const CatalogOptions& options)
      : options_(options), bytes_(bytes) {
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
    // The DOM names the texts; the file's bytes give where each one is written.
    try {
      const JsonStringRanges ranges(bytes);
      for (const Json::json_pointer& path : paths_) {
        text_ranges_.push_back(ranges.at(path.to_string()));
      }
      // ARB names its language: the translation is in the target language.
      if (document_.is_object() && document_.contains("@@locale") &&
          document_["@@locale"].is_string()) {
        locale_range_ = ranges.at("/@@locale");
      }
    } catch (const std::exception& error) {  // the two readers disagree: a defect, reported
      throw CatalogError(error.what());
    }
  }

  const std::vector<CatalogText>& texts() const override { return texts_; }
  const CatalogStats& stats() const override { return stats_; }

  // The file's bytes with each text's string replaced by its translation (and ARB's locale by
  // the target language), written as nlohmann-json writes a string: UTF-8, escapes as needed.
  std::string render(const std::vector<std::string>& translations) const override {
    require_translation_count("JSON", translations.size(), texts_.size(), "texts");
    std::vector<std::pair<ByteRange, std::string_view>> edits;
    for (std::size_t i = 0; i < translations.size(); ++i) {
      edits.emplace_back(text_ranges_[i], translations[i]);
    }
    if (locale_range_) edits.emplace_back(*locale_range_, options_.target_language);
    std::sort(edits.begin(), edits.end(),
              [](const auto& a, const auto& b) { return a.first.begin < b.first.begin; });
    std::string out;
    out.reserve(bytes_.size());
    std::size_t copied = 0;
    try {
      for (const auto& [range, text] : edits) {
        out.append(bytes_, copied, range.begin - copied);
        out += Json(text).dump(-1, ' ', /*ensure_ascii=*/false);
        copied = range.end;
      }
    } catch (const Json::exception& error) {
      throw CatalogError(std::string("JSON: ") + without_prefix(error.what()));
    }
    out.append(bytes_, copied);
    return out;
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
  std::string bytes_;  // the file as read
  Json document_;
  std::vector<CatalogText> texts_;
  std::vector<Json::json_pointer> paths_;
  std::vector<ByteRange> text_ranges_;     // texts_[i]'s string in bytes_
  std::optional<ByteRange> locale_range_;  // ARB's "@@locale"
  CatalogStats stats_;
};

}  // namespace

std::unique_ptr<Catalog> parse_json_catalog(std::string_view bytes, const CatalogOptions& options) {
  return std::make_unique<JsonCatalog>(bytes, options);
}

}  // namespace rpt::documents
