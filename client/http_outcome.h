// An answer of POST /v1/translate in the terms LoadResult counts for both protocols: the gRPC
// status code name the server mapped to the HTTP status (server/status.cc, to_http_status), and
// for 200 the sentences and target tokens of the JSON TranslateResponse.
#pragma once

#include <string>
#include <string_view>

#include "client/call_outcome.h"

namespace rpt::client {

// 400, 405 and 413 INVALID_ARGUMENT, 404 NOT_FOUND, 429 RESOURCE_EXHAUSTED, 499 CANCELLED, 500
// INTERNAL, 503 UNAVAILABLE, 504 DEADLINE_EXCEEDED; from a proxy in front: 401
// UNAUTHENTICATED, 403 PERMISSION_DENIED, 502 UNAVAILABLE; any other UNKNOWN.
std::string_view code_of_http_status(long http_status);

// A 200 whose body is not a TranslateResponse (translations[i].target_tokens) is INTERNAL, as
// gRPC reports a response it cannot parse.
CallOutcome outcome_of_http_answer(long http_status, const std::string& body);

}  // namespace rpt::client
