#include "server/http_api.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "server/http_translate_call.h"
#include "server/json_request.h"
#include "server/libretranslate_api.h"
#include "server/translation_entry.h"
#include "server/web_ui.h"

namespace rpt::server {
namespace {

HttpResponse text(int status, std::string body) {
  return {.status = status, .body = std::move(body)};
}

// The error body with the status mapped in server/status.cc.
HttpResponse error_response(const RequestStatus& status) {
  HttpResponse answer = json_response(to_http_status(status.code), json_error(status));
  // Overload passes: a client that honours Retry-After backs off without its own policy (a
  // tenant's token bucket says when it holds the call).
  if (std::string seconds = retry_after(status); !seconds.empty()) {
    answer.headers.emplace_back("Retry-After", std::move(seconds));
  }
  return answer;
}

// rpt's own JSON: server/json_request.h.
class NativeDialect final : public HttpTranslateDialect {
 public:
  RequestStatus decode(const HttpRequest& request, JsonTranslateRequest* decoded) override {
    RequestStatus status = parse_translate_json(request.body, decoded);
    decoded->api_key = bearer_token(request);
    // Cache-Control: no-cache asks for a fresh decode unless the body's options say otherwise.
    if (status.ok() && header(request, "cache-control").find("no-cache") != std::string::npos &&
        !decoded->request.options().has_use_cache()) {
      decoded->request.mutable_options()->set_use_cache(false);
    }
    return status;
  }
  std::optional<HttpResponse> encode(const v1::TranslateResponse& response) override {
    std::optional<std::string> body = to_json(response);
    if (!body.has_value()) return std::nullopt;
    return json_response(200, std::move(*body));
  }
  HttpResponse error(const RequestStatus& status) override { return error_response(status); }
};

HttpResponse list_models_response(ServiceContext& service, const HttpRequest& request) {
  CallRecord record(service, "ListModels", kProtocolHttp, header(request, "x-request-id"));
  v1::ListModelsResponse response;
  RequestStatus status = list_models(service, &response);
  std::optional<std::string> body;
  if (status.ok()) {
    body = to_json(response);
    if (!body.has_value()) status = {StatusCode::kInternal, "the model list could not be written"};
  }
  record.complete(status);
  return status.ok() ? json_response(200, std::move(*body)) : error_response(status);
}

// 405 in the error shape of the path's API: rpt's own, or LibreTranslate's.
HttpResponse method_not_allowed(const char* allowed,
                                HttpResponse (*shape)(const RequestStatus&) = error_response) {
  HttpResponse answer =
      shape({StatusCode::kMethodNotAllowed, std::string("this path takes ") + allowed + " only"});
  answer.headers.emplace_back("Allow", allowed);
  return answer;
}

}  // namespace

bool HttpApi::cors(const HttpRequest& request, const HttpResponder& respond) const {
  const std::string origin = header(request, "origin");
  if (origin.empty() || options_.cors_origins.empty()) return false;
  const bool any = std::find(options_.cors_origins.begin(), options_.cors_origins.end(), "*") !=
                   options_.cors_origins.end();
  const bool listed = std::find(options_.cors_origins.begin(), options_.cors_origins.end(),
                                origin) != options_.cors_origins.end();
  if (!any && !listed) return false;
  respond.add_header("Access-Control-Allow-Origin", any ? "*" : origin);
  if (!any) respond.add_header("Vary", "Origin");
  if (request.method != "OPTIONS" || header(request, "access-control-request-method").empty()) {
    return false;
  }
  respond({.status = 204,
           .content_type = "text/plain; charset=utf-8",
           .body = "",
           .headers = {{"Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS"},
                       {"Access-Control-Allow-Headers",
                        "Authorization, Content-Type, Cache-Control, X-Request-Id, "
                        "X-Request-Timeout"},
                       {"Access-Control-Max-Age", "600"}}});
  return true;
}

bool HttpApi::handle_public(HttpRequest& request, HttpResponder& respond) const {
  const bool get = request.method == "GET" || request.method == "HEAD";
  const std::string& path = request.path;
  if (options_.web_ui && is_web_ui_path(path)) {
    respond(get ? web_ui_response() : method_not_allowed("GET, HEAD"));
    return true;
  }
  if (path == "/v1/translate") {
    if (request.method != "POST") return respond(method_not_allowed("POST")), true;
    start_http_translation(service_, request, std::make_unique<NativeDialect>(),
                           std::move(respond));
    return true;
  }
  // LibreTranslate's API (server/libretranslate_api.h).
  if (path == "/translate") {
    if (request.method != "POST") {
      return respond(method_not_allowed("POST", libretranslate_error)), true;
    }
    start_http_translation(service_, request, libretranslate_dialect(service_), std::move(respond));
    return true;
  }
  if (path == "/detect") {
    respond(request.method == "POST" ? libretranslate_detect(service_, request)
                                     : method_not_allowed("POST", libretranslate_error));
    return true;
  }
  if (path.starts_with("/v2/")) return deepl_->handle(request, std::move(respond)), true;
  if (path == "/languages") {
    respond(get ? libretranslate_languages(service_)
                : method_not_allowed("GET", libretranslate_error));
    return true;
  }
  if (path == "/frontend/settings") {
    respond(get ? libretranslate_settings(service_)
                : method_not_allowed("GET", libretranslate_error));
    return true;
  }
  if (path == "/v1/models") {
    respond(get ? list_models_response(service_, request) : method_not_allowed("GET"));
    return true;
  }
  return false;
}

void HttpApi::handle(HttpRequest request, HttpResponder respond) const {
  const bool get = request.method == "GET" || request.method == "HEAD";
  const std::string& path = request.path;
  if (admin_ != nullptr && admin_->handle(request, respond)) return;
  if (options_.public_apis) {
    if (cors(request, respond)) return;
    if (handle_public(request, respond)) return;
  }
  if (!options_.admin) {
    return respond(text(404,
                        "not found: try GET /v1/models, POST /v1/translate, LibreTranslate's "
                        "POST /translate and GET /languages, or DeepL's POST /v2/translate\n"));
  }
  const bool known = path == "/healthz" || path == "/readyz" || path == "/metrics";
  if (known && !get) return respond(text(405, "this path takes GET only\n"));
  if (path == "/healthz") return respond(text(200, "ok\n"));
  if (path == "/readyz") {
    const bool ready = ready_();
    return respond(text(ready ? 200 : 503, ready ? "serving\n" : "not serving\n"));
  }
  if (path == "/metrics") {
    return respond({.status = 200,
                    .content_type = "text/plain; version=0.0.4; charset=utf-8",
                    .body = service_.metrics.render()});
  }
  respond(text(404, options_.public_apis
                        ? "not found: try /metrics, /healthz, /readyz, GET /v1/models, POST "
                          "/v1/translate, LibreTranslate's POST /translate and GET /languages, "
                          "or DeepL's POST /v2/translate\n"
                        : "not found: try /metrics, /healthz, /readyz (the translation APIs are "
                          "on the --http-listen port)\n"));
}

}  // namespace rpt::server
