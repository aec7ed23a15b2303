#include "server/http_api.h"

#include <cmath>
#include <cstdlib>

#include "server/json_request.h"
#include "server/translation_entry.h"

namespace rpt::server {
namespace {

std::string header(const HttpRequest& request, const std::string& name) {
  const auto found = request.headers.find(name);
  return found == request.headers.end() ? std::string() : found->second;
}

HttpResponse text(int status, std::string body) {
  return {.status = status, .body = std::move(body)};
}

HttpResponse json_response(int status, std::string body) {
  return {.status = status, .content_type = "application/json", .body = std::move(body)};
}

// The error body with the status mapped in server/status.cc; `http_status` overrides it (413).
HttpResponse error_response(const RequestStatus& status, int http_status = 0) {
  HttpResponse answer = json_response(
      http_status != 0 ? http_status : to_http_status(status.code), json_error(status));
  // Overload passes: a client that honours Retry-After backs off without its own policy.
  if (status.code == StatusCode::kResourceExhausted) {
    answer.headers.emplace_back("Retry-After", "1");
  }
  return answer;
}

// The call's deadline: the body's `timeout`, else the X-Request-Timeout header (seconds), else
// none. INVALID_ARGUMENT for a header that is not a positive number.
RequestStatus deadline_of(const HttpRequest& request, std::optional<double> timeout,
                          Clock::time_point* deadline) {
  const std::string timeout_header = header(request, "x-request-timeout");
  if (!timeout.has_value() && !timeout_header.empty()) {
    char* end = nullptr;
    const double seconds = std::strtod(timeout_header.c_str(), &end);
    if (end == timeout_header.c_str() || *end != '\0' || !std::isfinite(seconds) || seconds <= 0) {
      return {StatusCode::kInvalidArgument,
              "the X-Request-Timeout header must be a positive number of seconds"};
    }
    timeout = seconds;
  }
  *deadline = Clock::time_point::max();
  if (timeout.has_value() && *timeout < 1e7) {
    *deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                   std::chrono::duration<double>(*timeout));
  }
  return RequestStatus::Ok();
}

// POST /v1/translate: decodes the body, then runs the shared translation path; answers from the
// scheduler's thread when the last sentence is done. Deletes itself once answered.
class HttpTranslateCall final : public JobObserver {
 public:
  static void start(ServiceContext& service, const HttpRequest& request, HttpResponder respond) {
    auto* call = new HttpTranslateCall(service, request, std::move(respond));
    RequestStatus status;
    try {
      status = call->submit(request);
    } catch (...) {  // never out of here: the call must answer and leave the in-flight count
      status = status_from_exception(std::current_exception());
    }
    // Once submitted, the scheduler owns the call's end (it may already be gone).
    if (!status.ok()) {
      call->finish(status, request.body_too_large ? 413 : 0);
    }
  }

  void on_sentence(int index, TranslationResult result) override {
    collect_sentence(result, pending_, record_, response_.mutable_translations(index));
  }
  void on_finish(const RequestStatus& status) override { finish(status); }

 private:
  HttpTranslateCall(ServiceContext& service, const HttpRequest& request, HttpResponder respond)
      : service_(service),
        record_(service, "Translate", kProtocolHttp, header(request, "x-request-id")),
        respond_(std::move(respond)) {}

  RequestStatus submit(const HttpRequest& request) {
    if (request.body_too_large) {
      return {StatusCode::kInvalidArgument,
              "the body is over the limit of " +
                  std::to_string(service_.options.http_max_body_bytes) + " bytes"};
    }
    JsonTranslateRequest parsed;
    RequestStatus status = parse_translate_json(request.body, &parsed);
    if (!status.ok()) return status;
    Clock::time_point deadline;
    status = deadline_of(request, parsed.timeout_seconds, &deadline);
    if (!status.ok()) return status;
    // Cache-Control: no-cache asks for a fresh decode unless the body's options say otherwise.
    if (header(request, "cache-control").find("no-cache") != std::string::npos &&
        !parsed.request.options().has_use_cache()) {
      parsed.request.mutable_options()->set_use_cache(false);
    }
    status = prepare_translation(service_, parsed.request, deadline, this, record_, &pending_);
    if (!status.ok()) return status;
    for (int i = 0; i < pending_.texts(); ++i) response_.add_translations();
    // A client that hangs up cancels its call as a cancelled gRPC call does. Registered before
    // submission, and holding the job rather than this call, which may be gone by then.
    PendingTranslation cancelled;
    cancelled.model = pending_.model;
    cancelled.job = pending_.job;
    respond_.on_client_gone([cancelled] { cancelled.cancel(); });
    return submit_translation(pending_);
  }

  void finish(RequestStatus status, int http_status = 0) {
    // Only a hangup cancels an HTTP call: 499, nginx's "client closed request", in the log.
    if (status.code == StatusCode::kCancelled) {
      status.message = "the client closed the connection before the answer (HTTP 499)";
    }
    HttpResponse answer;
    if (status.ok()) {
      response_.set_model(pending_.model->name);
      std::optional<std::string> body = to_json(response_);
      if (body.has_value()) {
        answer = json_response(200, std::move(*body));
      } else {
        status = {StatusCode::kInternal, "the response could not be written as JSON"};
      }
    }
    if (!status.ok()) answer = error_response(status, http_status);
    record_.complete(status);
    HttpResponder respond = std::move(respond_);
    delete this;
    respond(std::move(answer));
  }

  ServiceContext& service_;
  CallRecord record_;
  HttpResponder respond_;
  PendingTranslation pending_;
  v1::TranslateResponse response_;
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

HttpResponse method_not_allowed(const char* allowed) {
  HttpResponse answer = error_response(
      {StatusCode::kInvalidArgument, std::string("this path takes ") + allowed + " only"}, 405);
  answer.headers.emplace_back("Allow", allowed);
  return answer;
}

}  // namespace

void HttpApi::handle(HttpRequest request, HttpResponder respond) const {
  const bool get = request.method == "GET" || request.method == "HEAD";
  const std::string& path = request.path;
  if (path == "/v1/translate") {
    if (request.method != "POST") return respond(method_not_allowed("POST"));
    return HttpTranslateCall::start(service_, request, std::move(respond));
  }
  if (path == "/v1/models") {
    return respond(get ? list_models_response(service_, request) : method_not_allowed("GET"));
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
  respond(text(404, "not found: try /metrics, /healthz, /readyz, GET /v1/models or "
                    "POST /v1/translate\n"));
}

}  // namespace rpt::server
