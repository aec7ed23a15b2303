#include "server/status.h"

#include "engine/errors.h"

namespace rpt::server {

grpc::Status to_grpc(const RequestStatus& status) {
  switch (status.code) {
    case StatusCode::kOk:
      return grpc::Status::OK;
    case StatusCode::kInvalidArgument:
      return {grpc::StatusCode::INVALID_ARGUMENT, status.message};
    case StatusCode::kNotFound:
      return {grpc::StatusCode::NOT_FOUND, status.message};
    case StatusCode::kResourceExhausted:
      return {grpc::StatusCode::RESOURCE_EXHAUSTED, status.message};
    case StatusCode::kDeadlineExceeded:
      return {grpc::StatusCode::DEADLINE_EXCEEDED, status.message};
    case StatusCode::kCancelled:
      return {grpc::StatusCode::CANCELLED, status.message};
    case StatusCode::kUnavailable:
      return {grpc::StatusCode::UNAVAILABLE, status.message};
    case StatusCode::kInternal:
      return {grpc::StatusCode::INTERNAL, status.message};
    case StatusCode::kUnauthenticated:
      return {grpc::StatusCode::UNAUTHENTICATED, status.message};
    case StatusCode::kQuotaExceeded:
      return {grpc::StatusCode::RESOURCE_EXHAUSTED, status.message};
    case StatusCode::kPermissionDenied:
      return {grpc::StatusCode::PERMISSION_DENIED, status.message};
    case StatusCode::kAlreadyExists:
      return {grpc::StatusCode::ALREADY_EXISTS, status.message};
    case StatusCode::kFailedPrecondition:
      return {grpc::StatusCode::FAILED_PRECONDITION, status.message};
    case StatusCode::kMethodNotAllowed:
      return {grpc::StatusCode::UNIMPLEMENTED, status.message};
    case StatusCode::kPayloadTooLarge:
      return {grpc::StatusCode::RESOURCE_EXHAUSTED, status.message};
  }
  return {grpc::StatusCode::INTERNAL, "unmapped status: " + status.message};
}

int to_http_status(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return 200;
    case StatusCode::kInvalidArgument:
      return 400;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kResourceExhausted:
      return 429;
    case StatusCode::kDeadlineExceeded:
      return 504;
    case StatusCode::kCancelled:
      return 499;  // nginx's "client closed request"
    case StatusCode::kUnavailable:
      return 503;
    case StatusCode::kInternal:
      return 500;
    case StatusCode::kUnauthenticated:
      return 401;
    case StatusCode::kQuotaExceeded:
      return 429;
    case StatusCode::kPermissionDenied:
      return 403;
    case StatusCode::kAlreadyExists:
      return 409;
    case StatusCode::kFailedPrecondition:
      return 400;
    case StatusCode::kMethodNotAllowed:
      return 405;
    case StatusCode::kPayloadTooLarge:
      return 413;
  }
  return 500;
}

std::string retry_after(const RequestStatus& status) {
  if (status.code != StatusCode::kResourceExhausted) return {};
  return std::to_string(status.retry_after_seconds > 0 ? status.retry_after_seconds : 1);
}

std::string_view code_name(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "OK";
    case StatusCode::kInvalidArgument:
      return "INVALID_ARGUMENT";
    case StatusCode::kNotFound:
      return "NOT_FOUND";
    case StatusCode::kResourceExhausted:
      return "RESOURCE_EXHAUSTED";
    case StatusCode::kDeadlineExceeded:
      return "DEADLINE_EXCEEDED";
    case StatusCode::kCancelled:
      return "CANCELLED";
    case StatusCode::kUnavailable:
      return "UNAVAILABLE";
    case StatusCode::kInternal:
      return "INTERNAL";
    case StatusCode::kUnauthenticated:
      return "UNAUTHENTICATED";
    case StatusCode::kQuotaExceeded:
      return "RESOURCE_EXHAUSTED";
    case StatusCode::kPermissionDenied:
      return "PERMISSION_DENIED";
    case StatusCode::kAlreadyExists:
      return "ALREADY_EXISTS";
    case StatusCode::kFailedPrecondition:
      return "FAILED_PRECONDITION";
    case StatusCode::kMethodNotAllowed:
      return "UNIMPLEMENTED";
    case StatusCode::kPayloadTooLarge:
      return "RESOURCE_EXHAUSTED";
  }
  return "INTERNAL";
}

RequestStatus status_from_exception(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const InvalidArgument& e) {
    return {StatusCode::kInvalidArgument, e.message()};
  } catch (const ResourceExhausted& e) {
    return {StatusCode::kResourceExhausted, e.message()};
  } catch (const std::exception& e) {
    return {StatusCode::kInternal, client_message(e)};
  } catch (...) {
    return {StatusCode::kInternal, "unknown failure"};
  }
}

std::string client_message(const std::exception& error) {
  const auto* ours = dynamic_cast<const Error*>(&error);
  return ours != nullptr ? ours->message() : error.what();
}

std::string echoed_text(const std::string& text) {
  constexpr std::size_t kMax = 64;
  if (text.size() <= kMax) return text;
  std::size_t cut = kMax;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // whole chars
  return text.substr(0, cut) + "... (" + std::to_string(text.size()) + " bytes)";
}

}  // namespace rpt::server
