// One HTTP translation call, whatever its dialect: rpt's own JSON (POST /v1/translate) or an API
// other tools speak (LibreTranslate's POST /translate). The dialect decodes the body into the
// TranslateRequest it means and writes the answer and errors in its own shapes; the call runs
// the shared path (server/translation_entry.h: routing, validation, cache, scheduler) and answers
// from the scheduler's hand-over thread. A client that hangs up cancels its call.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "proto/translate.pb.h"
#include "server/call_record.h"
#include "server/http_server.h"
#include "server/json_request.h"

namespace rpt::server {

class HttpTranslateDialect {
 public:
  virtual ~HttpTranslateDialect() = default;
  // The request the body means (with its timeout, if it has one); INVALID_ARGUMENT and friends
  // for what is wrong with it.
  virtual RequestStatus decode(const HttpRequest& request, JsonTranslateRequest* decoded) = 0;
  // The answer to a translated call (nullopt: it cannot be written, INTERNAL).
  virtual std::optional<HttpResponse> encode(const v1::TranslateResponse& response) = 0;
  // The answer to a failed call.
  virtual HttpResponse error(const RequestStatus& status) = 0;
};

// A JSON answer.
HttpResponse json_response(int status, std::string body);

// The value of header `name` (lower case), or "".
std::string header(const HttpRequest& request, const std::string& name);
// The key of an `Authorization: Bearer <key>` header, or "".
std::string bearer_token(const HttpRequest& request);

// Starts the call; `respond` is called exactly once, now or from the scheduler's threads.
void start_http_translation(ServiceContext& service, const HttpRequest& request,
                            std::unique_ptr<HttpTranslateDialect> dialect, HttpResponder respond);

}  // namespace rpt::server
