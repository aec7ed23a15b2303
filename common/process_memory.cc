#include "common/process_memory.h"

#include <climits>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace rpt {

void keep_freed_memory_for_reuse(std::size_t reuse_bytes) {
#if defined(__GLIBC__)
  const int bytes = static_cast<int>(reuse_bytes > INT_MAX ? INT_MAX : reuse_bytes);
  // glibc takes mmap thresholds up to 32 MiB on 64-bit machines; larger blocks stay mmapped.
  constexpr int kLargestMmapThreshold = 32 << 20;
  // Fixed thresholds no longer adapt (nor lower the trim threshold after an mmapped free).
  mallopt(M_MMAP_THRESHOLD, bytes < kLargestMmapThreshold ? bytes : kLargestMmapThreshold);
  mallopt(M_TRIM_THRESHOLD, bytes);
#else
  (void)reuse_bytes;
#endif
}

void return_freed_memory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

}  // namespace rpt
