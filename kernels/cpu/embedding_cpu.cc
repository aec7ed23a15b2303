#include <cmath>
#include <cstring>

#include "kernels/embedding.h"

namespace rpt::kernels {

void embedding_cpu(const EmbeddingArgs& args) {
  const auto log_base = static_cast<float>(std::log(10000.0) / args.dim);
  for (int t = 0; t < args.count; ++t) {
    float* out = args.out + static_cast<long>(t) * args.dim;
    const float* source =
        args.table != nullptr ? args.table + static_cast<long>(args.ids[t]) * args.dim : out;
    for (int i = 0; i < args.dim; ++i) out[i] = source[i] * args.scale;
    if (args.positions == nullptr) continue;
    const auto position = static_cast<float>(args.positions[t]);
    for (int i = 0; i < args.dim; i += 2) {
      // float32 arithmetic, the same order as the reference table construction
      const float angle = position * std::exp(static_cast<float>(i) * -log_base);
      out[i] += std::sin(angle);
      if (i + 1 < args.dim) out[i + 1] += std::cos(angle);
    }
  }
}

}  // namespace rpt::kernels
