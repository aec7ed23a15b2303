#include "server/deepl_api.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/text_hygiene.h"
#include "documents/markup_document.h"
#include "engine/errors.h"
#include "server/http_fields.h"
#include "server/http_translate_call.h"
#include "server/json_request.h"
#include "server/language_detection.h"
#include "server/model_registry.h"

namespace rpt::server {
namespace {

using nlohmann::json;

RequestStatus invalid(std::string message) {
  return {StatusCode::kInvalidArgument, std::move(message)};
}

std::string dump(const json& body) {
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

HttpResponse deepl_error(int http_status, const std::string& message) {
  return json_response(http_status, dump(json{{"message", message}}));
}

// DeepL's status for a failed call (an unserved language pair never gets here: deepl_request
// answers it with 400, as DeepL does; NOT_FOUND is a glossary or a document).
HttpResponse deepl_error(const RequestStatus& status) {
  int code = to_http_status(status.code);
  if (status.code == StatusCode::kUnauthenticated) code = 403;  // DeepL's authorization failure
  if (status.code == StatusCode::kQuotaExceeded) code = 456;    // DeepL's quota exceeded
  HttpResponse answer = deepl_error(code, status.message);
  if (std::string seconds = retry_after(status); !seconds.empty()) {
    answer.headers.emplace_back("Retry-After", std::move(seconds));
  }
  return answer;
}

std::string upper(std::string code) {
  std::transform(code.begin(), code.end(), code.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return code;
}

std::string lower(std::string code) {
  std::transform(code.begin(), code.end(), code.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return code;
}

}  // namespace

RequestStatus read_deepl_fields(const HttpRequest& request, FormFields* fields) {
  for (const auto& [name, value] : request.query) (*fields)[name].push_back(value);
  for (const HttpFormPart& part : request.parts) {  // a multipart body: its fields, not its files
    if (part.filename.empty() && part.name != "file") (*fields)[part.name].push_back(part.data);
  }
  if (request.body.empty() || !request.parts.empty()) return RequestStatus::Ok();
  const auto type = request.headers.find("content-type");
  if (type == request.headers.end() || !type->second.starts_with("application/json")) {
    for (auto& [name, values] : form_fields(request.body)) {
      auto& kept = (*fields)[name];
      kept.insert(kept.end(), values.begin(), values.end());
    }
    return RequestStatus::Ok();
  }
  json parsed;
  if (RequestStatus status = parse_json_body(request.body, &parsed); !status.ok()) return status;
  if (!parsed.is_object()) return invalid("the body must be a JSON object");
  for (const auto& field : parsed.items()) {  // not a structured binding: clang 14 cannot
    const std::string& name = field.key();    // capture one in the lambda below
    const json& value = field.value();
    auto add = [&](const json& item) -> RequestStatus {
      if (item.is_string()) {
        (*fields)[name].push_back(item.get<std::string>());
      } else if (item.is_boolean()) {
        (*fields)[name].push_back(item.get<bool>() ? "1" : "0");
      } else if (item.is_number_integer()) {
        (*fields)[name].push_back(std::to_string(item.get<long long>()));
      } else if (!item.is_null()) {
        return invalid("Value for '" + name + "' not supported.");
      }
      return RequestStatus::Ok();
    };
    if (value.is_array()) {
      for (const json& item : value) {
        if (RequestStatus status = add(item); !status.ok()) return status;
      }
    } else if (RequestStatus status = add(value); !status.ok()) {
      return status;
    }
  }
  return RequestStatus::Ok();
}

namespace {

std::string first(const FormFields& fields, const std::string& name) {
  const auto found = fields.find(name);
  return found == fields.end() || found->second.empty() ? std::string() : found->second.front();
}

// The caller's key: "Authorization: DeepL-Auth-Key KEY", or the (legacy) auth_key field.
std::string auth_key(const HttpRequest& request, const FormFields& fields) {
  const std::string authorization = header(request, "authorization");
  const std::string scheme = "DeepL-Auth-Key ";
  if (authorization.size() > scheme.size() &&
      lower(authorization.substr(0, scheme.size())) == lower(scheme)) {
    return authorization.substr(scheme.size());
  }
  return first(fields, "auth_key");
}

// A DeepL language code ("DE", "EN-US", "pt-br") as one of the served languages on `side`
// (source or target), as every API reads one (served_spelling). Empty when no served model has
// it.
std::string served_language(const ServiceContext& service, const std::string& code, bool target) {
  return served_spelling(
      code, target ? service.registry.target_languages() : service.registry.source_languages());
}

// An omitted source_lang: the source of the one served model into `target`, else the language
// detected on the call's texts among the sources into `target` (one for the call: rpt translates
// a call with one model). DeepL detects too; `target` has a model (served_language).
std::string detect_source(const ServiceContext& service, const std::string& target,
                          const std::vector<std::string>& texts, const std::string& tags) {
  const std::vector<std::string> sources = sources_into(service.registry, target);
  if (sources.size() <= 1) return sources.empty() ? std::string() : sources.front();
  const std::vector<std::string_view> views(texts.begin(), texts.end());
  return detect_language(views, sources,
                         tags.empty() ? DetectedText::kPlain : DetectedText::kMarkup)
      .language;
}

// The TranslateRequest DeepL's fields mean for `texts` (translate and document calls alike);
// *detected: the source language as DeepL names it.
RequestStatus deepl_request(const ServiceContext& service, const DeepLAccounts& accounts,
                            const std::string& key, const FormFields& fields,
                            const std::vector<std::string>& texts, v1::TranslateRequest* out,
                            std::string* detected) {
  const std::string target_code = first(fields, "target_lang");
  if (target_code.empty()) return invalid("Parameter 'target_lang' not specified.");
  const std::string target = served_language(service, target_code, true);
  if (target.empty()) return invalid("Value for 'target_lang' not supported.");
  const std::string source_code = first(fields, "source_lang");
  const std::string tags = first(fields, "tag_handling");
  std::string source;
  if (!source_code.empty()) {
    source = served_language(service, source_code, false);
    if (source.empty()) return invalid("Value for 'source_lang' not supported.");
  } else {
    source = detect_source(service, target, texts, tags);
  }
  *detected = upper(source);
  ModelRoute route;
  if (!service.registry.find({"", source, target}, &route).ok()) {
    return invalid("Value for 'target_lang' not supported: no served model translates " +
                   upper(source) + " into " + upper(target) + ".");
  }

  out->mutable_model()->set_source_language(source);
  out->mutable_model()->set_target_language(target);
  v1::DecodingOptions* options = out->mutable_options();
  if (!tags.empty() && tags != "xml" && tags != "html") {
    return invalid("Value for 'tag_handling' not supported.");
  }
  options->set_format(tags == "html"  ? v1::TEXT_FORMAT_HTML
                      : tags == "xml" ? v1::TEXT_FORMAT_XML
                                      : v1::TEXT_FORMAT_TEXT);
  // DeepL's default: sentences and newlines, but not newlines inside tagged text.
  const std::string split = first(fields, "split_sentences");
  if (split == "0") {
    options->set_split_sentences(v1::SPLIT_SENTENCES_NONE);
  } else if (split == "nonewlines" || (split.empty() && !tags.empty())) {
    options->set_split_sentences(v1::SPLIT_SENTENCES_SENTENCES);
  } else if (split == "1" || split.empty()) {
    options->set_split_sentences(v1::SPLIT_SENTENCES_AUTO);
  } else {
    return invalid("Value for 'split_sentences' not supported.");
  }
  if (const auto ignore = fields.find("ignore_tags"); ignore != fields.end()) {
    for (const std::string& list : ignore->second) {
      for (std::size_t begin = 0; begin <= list.size();) {
        const std::size_t end = std::min(list.find(',', begin), list.size());
        if (end > begin) options->add_ignore_tags(list.substr(begin, end - begin));
        begin = end + 1;
      }
    }
  }
  // No served model has formal and informal registers: "prefer_" asks for them only where a
  // language has them, as DeepL answers.
  const std::string formality = first(fields, "formality");
  if (formality == "more" || formality == "less") {
    return invalid("'formality' is not supported for given 'target_lang'.");
  }
  if (!formality.empty() && formality != "default" && formality != "prefer_more" &&
      formality != "prefer_less") {
    return invalid("Value for 'formality' not supported.");
  }
  const std::string glossary_id = first(fields, "glossary_id");
  if (!glossary_id.empty()) {
    if (source_code.empty()) {
      return invalid("Use of a glossary requires the 'source_lang' parameter to be specified.");
    }
    const auto glossary = accounts.glossary(key, glossary_id);
    if (glossary == nullptr) return {StatusCode::kNotFound, "Glossary not found."};
    if (glossary->source_language != source || glossary->target_language != target) {
      return invalid("The glossary's languages do not match source_lang and target_lang.");
    }
    for (const GlossaryEntry& entry : glossary->entries) {
      v1::GlossaryEntry* added = out->add_glossary();
      added->set_source(entry.source);
      added->set_target(entry.target);
    }
  }
  for (const std::string& text : texts) out->add_texts(text);
  return RequestStatus::Ok();
}

class DeepLTranslateDialect final : public HttpTranslateDialect {
 public:
  DeepLTranslateDialect(ServiceContext& service, DeepLAccounts& accounts, std::string key,
                        FormFields fields)
      : service_(service), accounts_(accounts), key_(std::move(key)), fields_(std::move(fields)) {}

  RequestStatus decode(const HttpRequest&, JsonTranslateRequest* decoded) override {
    const auto texts = fields_.find("text");
    if (texts == fields_.end() || texts->second.empty()) {
      return invalid("Parameter 'text' not specified.");
    }
    const std::string version = first(fields_, "tag_handling_version");
    if (!version.empty() && version != "v1" && version != "v2") {
      return invalid("Value for 'tag_handling_version' not supported.");
    }
    decoded->api_key = key_;
    decoded->fields = kDeepLSelectorFields;
    RequestStatus status = deepl_request(service_, accounts_, key_, fields_, texts->second,
                                         &decoded->request, &detected_);
    if (!status.ok()) return status;
    // DeepL names the algorithm used with tag handling; rpt's default reading is v1's (a bare
    // '&' is text). v2 parses XML strictly (HTML stays lenient): XML that is not well-formed as
    // it stands is refused with DeepL's message, before any of it is translated.
    const std::string tags = first(fields_, "tag_handling");
    if (!tags.empty()) tag_handling_version_ = version.empty() ? "v1" : version;
    if (tags == "xml" && version == "v2") {
      for (const std::string& text : texts->second) {
        if (!documents::is_well_formed_xml(text)) {
          return invalid("Tag handling parsing failed, please check input.");
        }
      }
    }
    for (const std::string& text : texts->second) billed_.push_back(billed_characters(text));
    return RequestStatus::Ok();
  }

  std::optional<HttpResponse> encode(const v1::TranslateResponse& response) override {
    json translations = json::array();
    long long billed = 0;
    for (int i = 0; i < response.translations_size(); ++i) {
      const long long characters = billed_[static_cast<std::size_t>(i)];
      billed += characters;
      json translation = {{"detected_source_language", detected_},
                          {"text", response.translations(i).hypotheses(0).text()},
                          {"billed_characters", characters}};
      if (!tag_handling_version_.empty())
        translation["tag_handling_version"] = tag_handling_version_;
      translations.push_back(std::move(translation));
    }
    accounts_.add_usage(key_, billed);
    return json_response(200, dump(json{{"translations", std::move(translations)}}));
  }

  HttpResponse error(const RequestStatus& status) override { return deepl_error(status); }

 private:
  ServiceContext& service_;
  DeepLAccounts& accounts_;
  const std::string key_;
  const FormFields fields_;
  std::string detected_;
  std::vector<long long> billed_;     // per text: its characters (billed_characters)
  std::string tag_handling_version_;  // with tag_handling: "v1" or "v2"; else empty
};

HttpResponse languages(const ServiceContext& service, const FormFields& fields) {
  const std::string type = first(fields, "type");
  if (!type.empty() && type != "source" && type != "target") {
    return deepl_error(400, "Value for 'type' not supported.");
  }
  const bool target = type == "target";
  const std::vector<std::string>& served =
      target ? service.registry.target_languages() : service.registry.source_languages();
  const std::set<std::string> codes(served.begin(), served.end());  // sorted
  json list = json::array();
  for (const std::string& code : codes) {
    json language = {{"language", upper(code)}, {"name", language_name(code)}};
    if (target) language["supports_formality"] = false;
    list.push_back(std::move(language));
  }
  return json_response(200, dump(list));
}

HttpResponse language_pairs(const ServiceContext& service) {
  json pairs = json::array();
  service.registry.for_each_direction(
      [&pairs](const std::string& source, const std::string& target) {
        pairs.push_back({{"source_lang", source}, {"target_lang", target}});
      });
  return json_response(200, dump(json{{"supported_languages", std::move(pairs)}}));
}

json glossary_info(const DeepLGlossary& glossary) {
  return {{"glossary_id", glossary.id},
          {"name", glossary.name},
          {"ready", true},
          {"source_lang", glossary.source_language},
          {"target_lang", glossary.target_language},
          {"creation_time", glossary.creation_time},
          {"entry_count", glossary.entries.size()}};
}

}  // namespace

RequestStatus read_glossary_entries(const std::string& tsv, std::vector<GlossaryEntry>* entries) {
  std::size_t line_number = 0;
  for (std::size_t begin = 0; begin < tsv.size();) {
    std::size_t end = std::min(tsv.find('\n', begin), tsv.size());
    std::string line = tsv.substr(begin, end - begin);
    begin = end + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    const std::size_t tab = line.find('\t');
    if (tab == std::string::npos || line.find('\t', tab + 1) != std::string::npos) {
      return invalid("Invalid glossary entries: line " + std::to_string(line_number) +
                     " is not source<TAB>target");
    }
    entries->push_back({line.substr(0, tab), line.substr(tab + 1)});
  }
  if (entries->empty()) return invalid("Invalid glossary entries: none given");
  return RequestStatus::Ok();
}

namespace {

// The paths DeepLApi serves, after /v2/.
bool known_path(const std::string& path) {
  return path == "translate" || path == "languages" || path == "usage" ||
         path == "glossary-language-pairs" || path == "glossaries" ||
         path.starts_with("glossaries/") || path == "document" || path.starts_with("document/");
}

}  // namespace

void DeepLApi::handle(const HttpRequest& request, HttpResponder respond) {
  if (!known_path(request.path.substr(4))) {
    return respond(deepl_error(404,
                               "Not found: rpt serves DeepL's /v2/translate, /v2/document, "
                               "/v2/languages, /v2/usage, /v2/glossary-language-pairs and "
                               "/v2/glossaries"));
  }
  FormFields fields;
  if (request.body_too_large) return respond(deepl_error(413, "Request Entity Too Large"));
  if (RequestStatus status = read_deepl_fields(request, &fields); !status.ok()) {
    return respond(deepl_error(status));
  }
  const std::string key = auth_key(request, fields);
  if (key.empty()) {
    return respond(deepl_error(
        403, "Authorization failure: send the header Authorization: DeepL-Auth-Key <key>"));
  }
  if (!service_.api_keys.authenticate(key).ok()) {
    return respond(deepl_error(403, "Authorization failure, check auth_key: the key is not valid"));
  }
  if (!accounts_.admit(key)) {
    return respond(deepl_error(403, "Authorization failure: this server tracks no more keys"));
  }
  const std::string path = request.path.substr(4);  // after "/v2/"
  const std::string& method = request.method;
  const bool get = method == "GET" || method == "HEAD";
  const auto not_allowed = [&respond](const char* allowed) {
    HttpResponse answer = deepl_error(405, std::string("this path takes ") + allowed);
    answer.headers.emplace_back("Allow", allowed);
    respond(std::move(answer));
  };
  if (path == "translate") {
    if (method != "POST") return not_allowed("POST");
    return start_http_translation(
        service_, request,
        std::make_unique<DeepLTranslateDialect>(service_, accounts_, key, std::move(fields)),
        std::move(respond));
  }
  if (path == "languages") {
    return (get || method == "POST") ? respond(languages(service_, fields))
                                     : not_allowed("GET, POST");
  }
  if (path == "usage") {
    if (!get && method != "POST") return not_allowed("GET, POST");
    // The key's month against its quota (--api-keys); without one, the limit a counter cannot
    // reach.
    std::int64_t count = accounts_.usage(key);
    std::int64_t limit = 0;
    if (const std::optional<ApiKeys::Usage> usage = service_.api_keys.usage(key)) {
      count = usage->characters;  // the key's tenant's, shared by its keys
      limit = usage->limit;
    }
    if (limit == 0) limit = std::numeric_limits<std::int64_t>::max();
    return respond(
        json_response(200, dump(json{{"character_count", count}, {"character_limit", limit}})));
  }
  if (path == "glossary-language-pairs") {
    return get ? respond(language_pairs(service_)) : not_allowed("GET");
  }
  if (path == "glossaries") {
    if (get) {
      json list = json::array();
      for (const auto& glossary : accounts_.glossaries(key))
        list.push_back(glossary_info(*glossary));
      return respond(json_response(200, dump(json{{"glossaries", std::move(list)}})));
    }
    if (method != "POST") return not_allowed("GET, POST");
    return respond(create_glossary(key, fields));
  }
  if (path.starts_with("glossaries/")) {
    std::string id = path.substr(11);
    const bool entries = id.ends_with("/entries");
    if (entries) id.resize(id.size() - 8);
    const auto glossary = accounts_.glossary(key, id);
    if (glossary == nullptr) return respond(deepl_error(404, "Glossary not found"));
    if (entries) {
      if (!get) return not_allowed("GET");
      std::string tsv;
      for (const GlossaryEntry& entry : glossary->entries) {
        tsv += entry.source + "\t" + entry.target + "\n";
      }
      return respond({.status = 200,
                      .content_type = "text/tab-separated-values; charset=utf-8",
                      .body = std::move(tsv)});
    }
    if (get) return respond(json_response(200, dump(glossary_info(*glossary))));
    if (method != "DELETE") return not_allowed("GET, DELETE");
    accounts_.remove_glossary(key, id);
    return respond({.status = 204, .content_type = "application/json", .body = ""});
  }
  if (path == "document") {
    if (method != "POST") return not_allowed("POST");
    return respond(upload_document(request, key, fields));
  }
  // document/{id} (its status) and document/{id}/result (the file, once).
  std::string id = path.substr(9);
  const bool result = id.ends_with("/result");
  if (result) id.resize(id.size() - 7);
  if (!get && method != "POST") return not_allowed("GET, POST");
  const DeepLDocuments::Handle handle{id, first(fields, "document_key")};
  if (result) {
    std::string bytes;
    std::string content_type;
    RequestStatus status = documents_.take_result(key, handle, &bytes, &content_type);
    if (!status.ok()) return respond(deepl_error(status));
    return respond({.status = 200, .content_type = content_type, .body = std::move(bytes)});
  }
  DeepLDocuments::Status status;
  if (RequestStatus found = documents_.status(key, handle, &status); !found.ok()) {
    return respond(deepl_error(found));
  }
  json body = {{"document_id", id}, {"status", status.state}};
  if (status.state == "done") body["billed_characters"] = status.billed_characters;
  if (status.state == "error") body["error_message"] = status.error;
  respond(json_response(200, dump(body)));
}

namespace {

// What a file's name says it is, and the Content-Type of its translation.
struct DocumentFormat {
  const char* extension;
  v1::TextFormat format;
  const char* content_type;
};
constexpr DocumentFormat kDocumentFormats[] = {
    {".txt", v1::TEXT_FORMAT_TEXT, "text/plain; charset=utf-8"},
    {".html", v1::TEXT_FORMAT_HTML, "text/html; charset=utf-8"},
    {".htm", v1::TEXT_FORMAT_HTML, "text/html; charset=utf-8"},
    {".xml", v1::TEXT_FORMAT_XML, "application/xml"},
    {".xlf", v1::TEXT_FORMAT_XLIFF, "application/x-xliff+xml"},
    {".xliff", v1::TEXT_FORMAT_XLIFF, "application/x-xliff+xml"},
    // Trados and memoQ keep a project's bilingual files as XLIFF 1.2 under names of their own.
    {".sdlxliff", v1::TEXT_FORMAT_XLIFF, "application/x-xliff+xml"},
    {".mqxliff", v1::TEXT_FORMAT_XLIFF, "application/x-xliff+xml"},
    {".po", v1::TEXT_FORMAT_PO, "text/x-po; charset=utf-8"},
    {".pot", v1::TEXT_FORMAT_PO, "text/x-po; charset=utf-8"},
    {".json", v1::TEXT_FORMAT_JSON, "application/json"},
    {".arb", v1::TEXT_FORMAT_JSON, "application/json"},
    {".md", v1::TEXT_FORMAT_MARKDOWN, "text/markdown; charset=utf-8"},
    {".markdown", v1::TEXT_FORMAT_MARKDOWN, "text/markdown; charset=utf-8"},
};

const DocumentFormat* document_format(const std::string& filename) {
  const std::string name = lower(filename);
  for (const DocumentFormat& format : kDocumentFormats) {
    if (name.ends_with(format.extension)) return &format;
  }
  return nullptr;
}

}  // namespace

HttpResponse DeepLApi::upload_document(const HttpRequest& request, const std::string& key,
                                       const FormFields& fields) {
  const HttpFormPart* file = nullptr;
  for (const HttpFormPart& part : request.parts) {
    if (part.name == "file") file = &part;
  }
  if (file == nullptr) {
    return deepl_error(400, "Parameter 'file' not specified: send the file as multipart/form-data");
  }
  const std::string filename =
      first(fields, "filename").empty() ? file->filename : first(fields, "filename");
  const DocumentFormat* format = document_format(filename);
  if (format == nullptr) {
    return deepl_error(400,
                       "Unsupported file type: rpt translates .txt, .html, .htm, .xml, .xlf, "
                       ".xliff, .sdlxliff, .mqxliff, .po and .pot files");
  }
  v1::TranslateRequest translate;
  std::string detected;
  RequestStatus status =
      deepl_request(service_, accounts_, key, fields, {file->data}, &translate, &detected);
  if (!status.ok()) return deepl_error(status);
  translate.mutable_options()->set_format(format->format);
  const long long characters = billed_characters(file->data);
  DeepLDocuments::Handle handle;
  status = documents_.start(key, translate, format->content_type, characters, &handle);
  if (!status.ok()) return deepl_error(status);
  accounts_.add_usage(key, characters);
  return json_response(200, dump(json{{"document_id", handle.id}, {"document_key", handle.key}}));
}

HttpResponse DeepLApi::create_glossary(const std::string& key, const FormFields& fields) {
  DeepLGlossary glossary;
  glossary.name = first(fields, "name");
  if (glossary.name.empty()) return deepl_error(400, "Parameter 'name' not specified.");
  const std::string format = first(fields, "entries_format");
  if (!format.empty() && format != "tsv") {
    return deepl_error(400, "Value for 'entries_format' not supported: rpt takes tsv entries.");
  }
  glossary.source_language = served_language(service_, first(fields, "source_lang"), false);
  glossary.target_language = served_language(service_, first(fields, "target_lang"), true);
  ModelRoute route;
  if (glossary.source_language.empty() || glossary.target_language.empty() ||
      !service_.registry.find({"", glossary.source_language, glossary.target_language}, &route)
           .ok()) {
    return deepl_error(400, "Unsupported glossary source and target pair.");
  }
  std::vector<GlossaryEntry> entries;
  if (RequestStatus status = read_glossary_entries(first(fields, "entries"), &entries);
      !status.ok()) {
    return deepl_error(status);
  }
  try {  // the rules of a call's own glossary: sizes, UTF-8, no placeholders, one target each
    const Glossary checked(entries, GlossaryLimits::kEntriesPerCall, "entries");
    if (route.model->span_protector) {
      route.model->span_protector->check_glossary(checked, "entries");
    }
  } catch (const InvalidArgument& e) {
    return deepl_error(400, "Invalid glossary entries: " + e.message());
  }
  glossary.entries = std::move(entries);
  const auto created = accounts_.add_glossary(key, std::move(glossary));
  if (created == nullptr) return deepl_error(456, "Glossary limit reached for this key.");
  return json_response(201, dump(glossary_info(*created)));
}

}  // namespace rpt::server
