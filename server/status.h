// The outcome of a request, and the ONE place where outcomes, engine errors and gRPC status codes
// (and their HTTP statuses) are mapped onto each other (docs/server.md). Handlers build a
// RequestStatus (never throw) and convert it with to_grpc() when they finish a call.
#pragma once

#include <exception>
#include <string>
#include <string_view>

#include <grpcpp/support/status.h>

namespace rpt::server {

enum class StatusCode {
  kOk,
  kInvalidArgument,     // empty/oversized/undecodable input, bad options
  kNotFound,            // unknown model
  kResourceExhausted,   // admission queue full, device-memory limit reached
  kDeadlineExceeded,    // deadline passed in the queue or while decoding
  kCancelled,           // the client cancelled
  kUnavailable,         // the server is draining
  kInternal,            // unexpected engine failure
  kUnauthenticated,     // no API key, or one the server does not list (--api-keys)
  kQuotaExceeded,       // the key's monthly characters are used up (gRPC RESOURCE_EXHAUSTED)
  kPermissionDenied,    // the key's tenant may not use the model (--api-keys)
  kAlreadyExists,       // the admin API: a model of that name is loaded
  kFailedPrecondition,  // the admin API: the change cannot be made as things are
  kMethodNotAllowed,    // HTTP: the path does not take the method (405; named UNIMPLEMENTED)
  kPayloadTooLarge,     // HTTP: a body over --http-max-body-bytes (413; named RESOURCE_EXHAUSTED,
                        // as gRPC names a message over its limit)
};

struct RequestStatus {
  StatusCode code = StatusCode::kOk;
  std::string message;
  // With RESOURCE_EXHAUSTED from a tenant's token bucket (--api-keys): the whole seconds until the
  // call would be admitted, sent as HTTP's Retry-After and gRPC's `retry-after` trailing metadata.
  // 0: none given (a full admission queue: HTTP's Retry-After is 1).
  int retry_after_seconds = 0;

  bool ok() const { return code == StatusCode::kOk; }
  static RequestStatus Ok() { return {}; }
};

// The gRPC status for `status`.
grpc::Status to_grpc(const RequestStatus& status);
// The HTTP status for `status` (the JSON API): 200, 400, 404, 429, 504, 499 (the client went
// away), 503, 500, 401 (no valid API key), 429 (quota), 403 (a model the key may not use), 409
// (already exists), 400 (failed precondition), 405 (method not allowed), 413 (payload too large).
int to_http_status(StatusCode code);
// The Retry-After header's value for a refused call: its retry_after_seconds, else "1" for
// RESOURCE_EXHAUSTED (a full queue); empty for no header (QUOTA_EXCEEDED: retrying does not help).
std::string retry_after(const RequestStatus& status);
// The gRPC code name ("OK", "INVALID_ARGUMENT", ...) for metrics labels and logs.
std::string_view code_name(StatusCode code);
// Maps an exception caught at the boundary: rpt::InvalidArgument -> INVALID_ARGUMENT,
// rpt::ResourceExhausted -> RESOURCE_EXHAUSTED, any other
// rpt::Error or std::exception -> INTERNAL (with its message), anything else -> INTERNAL.
RequestStatus status_from_exception(std::exception_ptr error);

// What a client is told of `error` (gRPC status messages, HTTP error bodies): an rpt::Error's
// message without the source file and line its what() carries (logs may keep those), else
// what().
std::string client_message(const std::exception& error);

// A client's string as echoed in an error: at most 64 bytes (the status message travels in a
// header, and a 16 MiB model name must not make the reply itself fail).
std::string echoed_text(const std::string& text);

}  // namespace rpt::server
