#include "server/http_translate_call.h"

#include <cmath>
#include <cstdlib>
#include <utility>

#include "server/translation_entry.h"

namespace rpt::server {
namespace {

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

// Runs the shared translation path for one HTTP request; deletes itself once answered.
class HttpTranslateCall final : public JobObserver {
 public:
  HttpTranslateCall(ServiceContext& service, const HttpRequest& request,
                    std::unique_ptr<HttpTranslateDialect> dialect, HttpResponder respond)
      : service_(service),
        record_(service, "Translate", kProtocolHttp, header(request, "x-request-id")),
        dialect_(std::move(dialect)),
        respond_(std::move(respond)) {}

  RequestStatus submit(const HttpRequest& request) {
    if (request.body_too_large) {
      return {StatusCode::kPayloadTooLarge,
              "the body is over the limit of " +
                  std::to_string(service_.options.http_max_body_bytes) + " bytes"};
    }
    JsonTranslateRequest decoded;
    RequestStatus status = dialect_->decode(request, &decoded);
    if (!status.ok()) return status;
    Clock::time_point deadline;
    status = deadline_of(request, decoded.timeout_seconds, &deadline);
    if (!status.ok()) return status;
    status = prepare_translation(service_, decoded.request, {decoded.api_key, decoded.fields},
                                 deadline, this, record_, &pending_);
    if (!status.ok()) return status;
    for (int i = 0; i < pending_.texts(); ++i) response_.add_translations();
    // A client that hangs up cancels its call as a cancelled gRPC call does. Registered before
    // submission, and holding the job rather than this call, which may be gone by then.
    PendingTranslation cancelled;
    cancelled.model = pending_.model;
    cancelled.job = pending_.job;
    respond_.on_client_gone([cancelled] { cancelled.cancel(); });
    RequestStatus queued = submit_translation(pending_);
    if (!queued.ok()) {  // queue full
      refund_translation(service_, decoded.api_key, record_);
    }
    return queued;
  }

  void on_sentence(int index, TranslationResult result) override {
    collect_sentence(result, pending_, record_, response_.mutable_translations(index));
  }
  void on_finish(const RequestStatus& status) override { finish(status); }

  void finish(RequestStatus status) {
    // Only a hangup cancels an HTTP call: 499, nginx's "client closed request", in the log.
    if (status.code == StatusCode::kCancelled) {
      status.message = "the client closed the connection before the answer (HTTP 499)";
    }
    HttpResponse answer;
    if (status.ok()) {
      response_.set_model(pending_.model->name);
      std::optional<HttpResponse> encoded = dialect_->encode(response_);
      if (encoded.has_value()) {
        answer = std::move(*encoded);
      } else {
        status = {StatusCode::kInternal, "the response could not be written"};
      }
    }
    if (!status.ok()) answer = dialect_->error(status);
    record_.complete(status);
    HttpResponder respond = std::move(respond_);
    delete this;
    respond(std::move(answer));
  }

 private:
  ServiceContext& service_;
  CallRecord record_;
  std::unique_ptr<HttpTranslateDialect> dialect_;
  HttpResponder respond_;
  PendingTranslation pending_;
  v1::TranslateResponse response_;
};

}  // namespace

HttpResponse json_response(int status, std::string body) {
  return {.status = status, .content_type = "application/json", .body = std::move(body)};
}

std::string header(const HttpRequest& request, const std::string& name) {
  const auto found = request.headers.find(name);
  return found == request.headers.end() ? std::string() : found->second;
}

std::string bearer_token(const HttpRequest& request) {
  const std::string authorization = header(request, "authorization");
  return authorization.rfind("Bearer ", 0) == 0 ? authorization.substr(7) : std::string();
}

void start_http_translation(ServiceContext& service, const HttpRequest& request,
                            std::unique_ptr<HttpTranslateDialect> dialect, HttpResponder respond) {
  auto* call = new HttpTranslateCall(service, request, std::move(dialect), std::move(respond));
  RequestStatus status;
  try {
    status = call->submit(request);
  } catch (...) {  // never out of here: the call must answer and leave the in-flight count
    status = status_from_exception(std::current_exception());
  }
  // Once submitted, the scheduler owns the call's end (it may already be gone).
  if (!status.ok()) call->finish(status);
}

}  // namespace rpt::server
