// libFuzzer target: arbitrary bytes (valid UTF-8 or not) through the source tokenizer, and the
// text checks that run before it. Must never crash; exceptions are the tokenizer's way to refuse.
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/text_hygiene.h"
#include "fuzz_model.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const bool valid = rpt::is_valid_utf8(text);
  const bool blank = rpt::is_blank_text(text);
  if (blank && !valid) __builtin_trap();  // blank text is valid UTF-8 by definition
  try {
    const auto pieces = rpt::fuzz::fuzz_model().model->source_tokenizer().encode(text);
    for (const std::string& piece : pieces) {
      if (piece.empty()) __builtin_trap();  // a tokenizer never yields an empty piece
    }
  } catch (const std::exception&) {
  }
  return 0;
}
