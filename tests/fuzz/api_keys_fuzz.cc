// libFuzzer target: arbitrary bytes as an --api-keys file (server/api_keys.h). Parsing either
// yields tenants that keep the file's rules (a valid name, one key or more, priority 1-10, a burst
// > 0, finite rates >= 0) or throws std::invalid_argument naming the file; nothing else may
// escape (a YAML error that is not turned into one, a crash, a hang). Tenants parsed are then
// served, reloaded over themselves and asked to admit calls with the seeds' key
// (fuzz-0123456789abcdef), an unknown key and none.
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "server/api_keys.h"

namespace {

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "api_keys: %s\n", what);
  __builtin_trap();
}

class StillClock final : public rpt::server::TenantClock {
 public:
  std::chrono::steady_clock::time_point now() const override { return at; }
  int month() const override { return 2030 * 12; }
  std::chrono::steady_clock::time_point at{std::chrono::hours(1)};
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using rpt::server::ApiKeys;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<rpt::server::TenantSpec> specs;
  try {
    specs = ApiKeys::parse(text, "fuzz.yaml");
  } catch (const std::invalid_argument& error) {
    if (std::string_view(error.what()).rfind("--api-keys fuzz.yaml", 0) != 0) {
      fail("an error that does not name the file");
    }
    return 0;
  }
  if (specs.empty()) fail("no tenant and no error");
  for (const rpt::server::TenantSpec& spec : specs) {
    if (spec.name.empty() || spec.name.size() > 64) fail("a bad tenant name");
    if (spec.keys.empty()) fail("a tenant without keys");
    if (spec.priority < 1 || spec.priority > 10) fail("a priority out of range");
    if (!(spec.burst_seconds > 0) || !std::isfinite(spec.burst_seconds)) fail("a bad burst");
    for (const double rate : {spec.requests_per_second, spec.characters_per_minute}) {
      if (!(rate >= 0) || !std::isfinite(rate)) fail("a bad rate");
    }
    if (spec.characters_per_month < 0) fail("a negative quota");
    if (spec.models.has_value() && spec.models->empty()) fail("an empty model list");
  }
  auto clock = std::make_shared<StillClock>();
  ApiKeys keys(clock);
  keys.replace(text, "fuzz.yaml");  // parsed once already: must not throw now
  const std::int64_t characters = static_cast<std::int64_t>(size % 1000);
  for (int i = 0; i < 3; ++i) {
    keys.admit("fuzz-0123456789abcdef", "en-de", characters);
    keys.admit("fuzz-0123456789abcdef", std::nullopt, characters);
    clock->at += std::chrono::milliseconds(700);
  }
  if (keys.authenticate("").ok() || keys.authenticate("unknown-0123456789abcdef").ok()) {
    fail("a key admitted that the file does not list");
  }
  keys.replace(text, "fuzz.yaml");  // a reload over itself carries the usage
  keys.usage("fuzz-0123456789abcdef");
  return 0;
}
