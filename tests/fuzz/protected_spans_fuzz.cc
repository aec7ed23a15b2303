// libFuzzer target: arbitrary bytes through find_protected_spans, with and without accelerators.
// Must never crash, and every result keeps the invariants of tests/spans/span_invariants.h.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "spans/protected_spans.h"
#include "tests/spans/span_invariants.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (const bool accelerators : {true, false}) {
    const auto spans = rpt::find_protected_spans(text, {.accelerators = accelerators});
    const std::string problem = rpt::check_span_invariants(text, spans);
    if (!problem.empty()) {
      std::fprintf(stderr, "protected spans: %s\n", problem.c_str());
      __builtin_trap();
    }
  }
  return 0;
}
