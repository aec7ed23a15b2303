#include "server/libretranslate_api.h"

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "server/http_fields.h"
#include "server/api_keys.h"
#include "server/language_detection.h"
#include "server/model_registry.h"

namespace rpt::server {
namespace {

using nlohmann::json;

RequestStatus invalid(std::string message) {
  return {StatusCode::kInvalidArgument, std::move(message)};
}

// A q of another type than a text or an array that Python's `not q` holds for (null, false, 0,
// {}): LibreTranslate answers it as missing ("" and [] are read, then found missing: lacks_q).
bool is_falsy(const json& value) {
  return value.is_null() || value == false || (value.is_number() && value == 0) ||
         (value.is_object() && value.empty());
}

RequestStatus read_json(const std::string& body, LibreTranslateRequest* out) {
  json parsed;
  if (RequestStatus status = parse_json_body(body, &parsed); !status.ok()) return status;
  if (!parsed.is_object()) return invalid("Invalid request: the body must be a JSON object");
  for (const char* name : {"source", "target", "format", "api_key"}) {
    const auto found = parsed.find(name);
    if (found != parsed.end() && !found->is_null() && !found->is_string()) {
      return invalid(std::string("Invalid request: ") + name + " must be a string");
    }
  }
  const auto q = parsed.find("q");
  if (q != parsed.end() && q->is_string()) {
    out->q.push_back(q->get<std::string>());
  } else if (q != parsed.end() && q->is_array()) {
    out->q_is_list = true;
    for (const json& text : *q) {
      if (!text.is_string()) return invalid("Invalid request: q must hold strings");
      out->q.push_back(text.get<std::string>());
    }
  } else if (q != parsed.end() && !is_falsy(*q)) {
    return invalid("Invalid request: q must be a string or an array of strings");
  }
  out->api_key =
      parsed.value("api_key", json()).is_string() ? parsed["api_key"].get<std::string>() : "";
  out->source =
      parsed.value("source", json()).is_string() ? parsed["source"].get<std::string>() : "";
  out->target =
      parsed.value("target", json()).is_string() ? parsed["target"].get<std::string>() : "";
  if (parsed.value("format", json()).is_string()) out->format = parsed["format"];
  const auto alternatives = parsed.find("alternatives");
  if (alternatives != parsed.end() && !alternatives->is_null()) {
    if (!alternatives->is_number_integer()) {
      return invalid("Invalid request: alternatives must be an integer");
    }
    out->alternatives = std::clamp(alternatives->get<long long>(), -1LL, 1000LL);
  }
  return RequestStatus::Ok();
}

RequestStatus read_form(const FormFields& fields, LibreTranslateRequest* out) {
  const auto first = [&fields](const char* name) {
    const auto found = fields.find(name);
    return found == fields.end() ? std::string() : found->second.front();
  };
  const auto q = fields.find("q");
  if (q != fields.end()) out->q = q->second;
  out->q_is_list = q != fields.end() && q->second.size() > 1;
  out->source = first("source");
  out->api_key = first("api_key");
  out->target = first("target");
  if (fields.contains("format")) out->format = first("format");
  if (fields.contains("alternatives")) {
    const std::string text = first("alternatives");
    char* end = nullptr;
    const long value = std::strtol(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0') {
      return invalid("Invalid request: alternatives must be an integer");
    }
    out->alternatives = static_cast<int>(std::clamp(value, -1L, 1000L));
  }
  return RequestStatus::Ok();
}

// A request's fields from its body: JSON, or a form (as libretranslatepy sends it).
}  // namespace

RequestStatus read_libretranslate_request(const HttpRequest& request, LibreTranslateRequest* out) {
  const std::string type = header(request, "content-type");
  if (type.starts_with("application/json")) return read_json(request.body, out);
  if (type.starts_with("multipart/")) {  // a form as browsers send it (parsed by the server)
    FormFields fields;
    for (const HttpFormPart& part : request.parts) fields[part.name].push_back(part.data);
    return read_form(fields, out);
  }
  return read_form(form_fields(request.body), out);
}

bool lacks_q(const LibreTranslateRequest& request) {
  return request.q.empty() || (!request.q_is_list && request.q.front().empty());
}

namespace {

class LibreTranslateDialect final : public HttpTranslateDialect {
 public:
  explicit LibreTranslateDialect(ServiceContext& service) : service_(service) {}

  RequestStatus decode(const HttpRequest& request, JsonTranslateRequest* decoded) override {
    LibreTranslateRequest lt;
    RequestStatus status = read_libretranslate_request(request, &lt);
    if (!status.ok()) return status;
    if (lacks_q(lt)) return invalid("Invalid request: missing q parameter");
    if (lt.source.empty()) return invalid("Invalid request: missing source parameter");
    if (lt.target.empty()) return invalid("Invalid request: missing target parameter");
    if (lt.format != "text" && lt.format != "html") {
      return invalid("Invalid request: format must be text or html");
    }
    const int most = service_.options.limits.max_beam_size - 1;
    if (lt.alternatives < 0 || lt.alternatives > most) {
      return invalid("Invalid request: alternatives must be between 0 and " + std::to_string(most));
    }
    if (lt.source == "auto") {
      status = pick_source(lt, &detected_);
      if (!status.ok()) return status;
      lt.source = detected_.language;
    }
    q_is_list_ = lt.q_is_list;
    alternatives_ = lt.alternatives;
    decoded->api_key = lt.api_key;
    decoded->fields = kLibreTranslateSelectorFields;
    v1::TranslateRequest& out = decoded->request;
    out.mutable_model()->set_source_language(lt.source);
    out.mutable_model()->set_target_language(lt.target);
    for (std::string& text : lt.q) out.add_texts(std::move(text));
    v1::DecodingOptions* options = out.mutable_options();
    options->set_format(lt.format == "html" ? v1::TEXT_FORMAT_HTML : v1::TEXT_FORMAT_TEXT);
    if (lt.alternatives > 0) {
      options->set_n_best(static_cast<unsigned>(lt.alternatives + 1));
      options->set_beam_size(static_cast<unsigned>(
          std::max(lt.alternatives + 1, service_.options.default_decoding.beam_size)));
    }
    return RequestStatus::Ok();
  }

  std::optional<HttpResponse> encode(const v1::TranslateResponse& response) override {
    json texts = json::array();
    json alternatives = json::array();
    for (const v1::Translation& translation : response.translations()) {
      texts.push_back(translation.hypotheses(0).text());
      json others = json::array();
      for (int k = 1; k < translation.hypotheses_size(); ++k) {
        others.push_back(translation.hypotheses(k).text());
      }
      alternatives.push_back(std::move(others));
    }
    json body = {{"translatedText", q_is_list_ ? texts : texts[0]}};
    if (alternatives_ > 0) body["alternatives"] = q_is_list_ ? alternatives : alternatives[0];
    if (!detected_.language.empty()) {
      const json detected = {{"confidence", detected_.confidence},
                             {"language", detected_.language}};
      body["detectedLanguage"] =
          q_is_list_ ? json(std::vector<json>(texts.size(), detected)) : detected;
    }
    return json_response(200, body.dump(-1, ' ', false, json::error_handler_t::replace));
  }

  HttpResponse error(const RequestStatus& status) override { return libretranslate_error(status); }

 private:
  // source "auto": among the sources of the models into the target, the one served language,
  // else the language detected on the call's texts (one for all of them, as LibreTranslate).
  RequestStatus pick_source(const LibreTranslateRequest& lt, LanguageGuess* detected) const {
    const std::vector<std::string> sources = sources_into(service_.registry, lt.target);
    if (sources.empty()) return invalid(lt.target + " is not supported as a target language");
    if (sources.size() == 1) {
      *detected = {sources.front(), 100.0};
      return RequestStatus::Ok();
    }
    const std::vector<std::string_view> texts(lt.q.begin(), lt.q.end());
    *detected = detect_language(texts, sources,
                                lt.format == "html" ? DetectedText::kMarkup : DetectedText::kPlain);
    return RequestStatus::Ok();
  }

  ServiceContext& service_;
  bool q_is_list_ = false;
  int alternatives_ = 0;
  LanguageGuess detected_;  // with source auto: the language picked
};

}  // namespace

std::unique_ptr<HttpTranslateDialect> libretranslate_dialect(ServiceContext& service) {
  return std::make_unique<LibreTranslateDialect>(service);
}

HttpResponse libretranslate_error(const RequestStatus& status) {
  int code = to_http_status(status.code);
  if (status.code == StatusCode::kNotFound) code = 400;  // an unsupported language, as any bad one
  if (status.code == StatusCode::kUnauthenticated) code = 403;  // "Invalid API key"
  HttpResponse answer = json_response(
      code, json{{"error", status.message}}.dump(-1, ' ', false, json::error_handler_t::replace));
  if (std::string seconds = retry_after(status); !seconds.empty()) {
    answer.headers.emplace_back("Retry-After", std::move(seconds));
  }
  return answer;
}

HttpResponse libretranslate_detect(ServiceContext& service, const HttpRequest& request) {
  CallRecord record(service, "Detect", kProtocolHttp, header(request, "x-request-id"));
  const auto fail = [&record](const RequestStatus& status) {
    record.complete(status);
    return libretranslate_error(status);
  };
  if (request.body_too_large)
    return fail({StatusCode::kPayloadTooLarge, "Request Entity Too Large"});
  LibreTranslateRequest lt;
  if (RequestStatus status = read_libretranslate_request(request, &lt); !status.ok())
    return fail(status);
  if (lacks_q(lt)) return fail(invalid("Invalid request: missing q parameter"));
  // With --api-keys a detection is a call like a translation: a listed key (LibreTranslate's
  // api_key, else Authorization: Bearer), one request from the tenant's bucket and its
  // characters (no model: detection uses none).
  const std::string key = !lt.api_key.empty() ? lt.api_key : bearer_token(request);
  if (const auto tenant = service.api_keys.identify(key); tenant.has_value()) {
    record.set_tenant(tenant->name);  // logs and metrics: never the key
  }
  std::int64_t characters = 0;
  for (const std::string& text : lt.q) characters += billed_characters(text);
  if (RequestStatus status = service.api_keys.admit(key, std::nullopt, characters); !status.ok()) {
    return fail(status);
  }
  // As LibreTranslate: a list of candidates, best first, for the text or for all the texts.
  const std::vector<std::string_view> texts(lt.q.begin(), lt.q.end());
  json answer = json::array();
  for (const LanguageGuess& guess : rank_languages(texts, served_sources(service.registry))) {
    answer.push_back({{"confidence", guess.confidence}, {"language", guess.language}});
  }
  record.complete(RequestStatus::Ok());
  return json_response(200, answer.dump(-1, ' ', false, json::error_handler_t::replace));
}

HttpResponse libretranslate_languages(ServiceContext& service) {
  std::map<std::string, std::set<std::string>> targets;  // source -> targets, sorted
  service.registry.for_each_direction(
      [&targets](const std::string& source, const std::string& target) {
        if (!source.empty() && !target.empty()) targets[source].insert(target);
      });
  json languages = json::array();
  for (const auto& [code, to] : targets) {
    languages.push_back({{"code", code}, {"name", language_name(code)}, {"targets", to}});
  }
  return json_response(200, languages.dump());
}

HttpResponse libretranslate_settings(ServiceContext& service) {
  std::string source = "en";
  std::string target = "en";
  if (const auto models = service.registry.models(); !models.empty()) {
    source = models.front()->description.source_language;
    target = models.front()->description.target_language;
    if (source == kAnySourceLanguage) source = "auto";  // a model that reads any language
  }
  const json settings = {{"apiKeys", service.api_keys.enabled()},
                         {"keyRequired", service.api_keys.enabled()},
                         {"charLimit", service.options.limits.max_text_bytes},
                         {"frontendTimeout", 500},
                         {"suggestions", false},
                         {"filesTranslation", false},
                         {"supportedFilesFormat", json::array()},
                         {"language",
                          {{"source", {{"code", source}, {"name", language_name(source)}}},
                           {"target", {{"code", target}, {"name", language_name(target)}}}}}};
  return json_response(200, settings.dump());
}

}  // namespace rpt::server
