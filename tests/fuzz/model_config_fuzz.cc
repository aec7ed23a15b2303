// libFuzzer target: arbitrary bytes as a model directory's config.json. Parsing either refuses
// (rpt::ModelError, naming the file) or gives a configuration whose derived widths are what the
// engine allocates from: positive, in range, heads * head_dim == attention_dim; and language pairs
// with the first the default, none twice. Must never crash.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "engine/errors.h"
#include "engine/model_config.h"

namespace {

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "model_config: %s\n", what);
  __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  rpt::ModelConfig config;
  try {
    config = rpt::ModelConfig::parse(text, "config.json");
  } catch (const rpt::ModelError&) {
    return 0;
  }
  const rpt::ArchitectureConfig& a = config.architecture;
  if (a.d_model <= 0 || a.heads <= 0 || a.head_dim() <= 0) fail("non-positive width accepted");
  if (a.encoder_layers <= 0 || a.decoder_layers <= 0 || a.d_ff <= 0) fail("no layers accepted");
  const long attention = static_cast<long>(a.heads) * a.head_dim();
  if (attention != a.attention_dim() || attention > (1L << 16)) fail("attention_dim out of range");
  if (a.head_size == 0 && a.d_model % a.heads != 0) fail("heads not dividing d_model accepted");
  // The language pairs: at least one, the first the top-level default, none twice.
  const std::vector<rpt::LanguagePair>& pairs = config.language_pairs;
  if (pairs.empty()) fail("no language pair");
  if (pairs[0].source != config.source_language || pairs[0].target != config.target_language ||
      pairs[0].prefix != config.source_prefix) {
    fail("the first language pair is not the default");
  }
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (pairs[i].source == pairs[j].source && pairs[i].target == pairs[j].target) {
        fail("a language pair twice");
      }
    }
  }
  return 0;
}
