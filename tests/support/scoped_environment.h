// Test support: one environment variable set (or unset) for a scope, its previous value put back
// at the end. setenv is not thread-safe: only around code that reads the variable on the test's
// own thread (RPT_INT8_PACKED, read when weights are quantized).
#pragma once

#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

namespace rpt::testing {

class ScopedEnvironmentVariable {
 public:
  // value nullptr: the variable is unset for the scope.
  ScopedEnvironmentVariable(std::string name, const char* value) : name_(std::move(name)) {
    if (const char* previous = std::getenv(name_.c_str())) previous_ = previous;
    set(value);
  }
  ~ScopedEnvironmentVariable() { set(previous_ ? previous_->c_str() : nullptr); }
  ScopedEnvironmentVariable(const ScopedEnvironmentVariable&) = delete;
  ScopedEnvironmentVariable& operator=(const ScopedEnvironmentVariable&) = delete;

 private:
  void set(const char* value) const {
    if (value != nullptr) {
      setenv(name_.c_str(), value, 1);
    } else {
      unsetenv(name_.c_str());
    }
  }

  std::string name_;
  std::optional<std::string> previous_;
};

}  // namespace rpt::testing
