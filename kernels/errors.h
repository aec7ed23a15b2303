// Typed errors of rpt. Everything the engine or the kernels refuse is thrown as one of
// these, carrying the file:line where the check failed; the gRPC layer maps them to status codes.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace rpt {

// Base of all engine errors. `what()` is "message (file:line)".
class Error : public std::runtime_error {
 public:
  Error(const std::string& message, const char* file, int line)
      : std::runtime_error(message + " (" + file + ":" + std::to_string(line) + ")"),
        message_(message) {}
  // The message without the source location, for end users.
  const std::string& message() const { return message_; }

 private:
  std::string message_;
};

// The caller asked for something invalid (bad option, empty or oversized input).
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

// A model directory or weights file is missing, corrupt, truncated or of a newer version.
class ModelError : public Error {
 public:
  using Error::Error;
};

// The work does not fit: a configured device-memory limit (or the device itself) has no room.
// The server answers RESOURCE_EXHAUSTED; retrying later, or with less, can succeed.
class ResourceExhausted : public Error {
 public:
  using Error::Error;
};

// A device or library call failed (CUDA, cuBLAS).
class RuntimeFailure : public Error {
 public:
  using Error::Error;
};

namespace detail {
template <typename... Parts>
std::string concat(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}
}  // namespace detail

}  // namespace rpt

// Throws ErrorType(message parts...) with the current file:line when `condition` is false.
#define RPT_CHECK(condition, ErrorType, ...)                                   \
  do {                                                                         \
    if (!(condition)) {                                                        \
      throw ErrorType(::rpt::detail::concat(__VA_ARGS__), __FILE__, __LINE__); \
    }                                                                          \
  } while (false)

#define RPT_THROW(ErrorType, ...) \
  throw ErrorType(::rpt::detail::concat(__VA_ARGS__), __FILE__, __LINE__)
