#include <cmath>

#include "kernels/position.h"

namespace rpt::kernels {

int t5_bucket(int relative_position, bool bidirectional, int buckets, int max_distance) {
  int bucket = 0;
  int n = relative_position;
  if (bidirectional) {
    buckets /= 2;
    if (n > 0) bucket += buckets;
    n = n < 0 ? -n : n;
  } else {
    n = n < 0 ? -n : 0;  // only keys at or before the query
  }
  const int max_exact = buckets / 2;
  if (n < max_exact) return bucket + n;
  // Logarithmic bins beyond max_exact, computed in float32 as the reference does.
  const float scaled = std::log(static_cast<float>(n) / static_cast<float>(max_exact)) /
                       static_cast<float>(std::log(static_cast<double>(max_distance) / max_exact)) *
                       static_cast<float>(buckets - max_exact);
  int large = max_exact + static_cast<int>(scaled);
  if (large > buckets - 1) large = buckets - 1;
  return bucket + large;
}

}  // namespace rpt::kernels
