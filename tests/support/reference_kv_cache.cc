#include <algorithm>
#include <cstddef>
#include <cstring>

#include "tests/support/reference_kernels.h"

namespace rpt::kernels {

// The cache ops only move elements, so one definition serves every precision: offsets are
// counted in elements and scaled to bytes by the element size.

void reference_cache_append(const CacheAppendArgs& args) {
  const std::size_t element_bytes = precision_size(args.precision);
  const long width = args.layout.width;
  const auto* qkv = static_cast<const std::byte*>(args.qkv);
  auto* cache = static_cast<std::byte*>(args.cache);
  for (int r = 0; r < args.rows; ++r) {
    // The key and value columns are adjacent in qkv, as keys then values at a cache position.
    const long source = static_cast<long>(r) * args.qkv_stride + width;
    const long target = r * args.layout.row_elements() + args.layer * args.layout.layer_elements() +
                        static_cast<long>(args.positions[r]) * 2 * width;
    std::memcpy(cache + target * element_bytes, qkv + source * element_bytes,
                2 * width * element_bytes);
  }
}

void reference_cache_gather(const CacheGatherArgs& args) {
  const std::size_t element_bytes = precision_size(args.precision);
  const CacheLayout& layout = args.layout;
  const auto* in = static_cast<const std::byte*>(args.in);
  auto* out = static_cast<std::byte*>(args.out);
  for (int r = 0; r < args.rows; ++r) {
    const int parent = args.parents[r];
    if (parent < 0) continue;
    // Positions [0, length) of a layer are contiguous: one copy per layer.
    const std::size_t bytes =
        static_cast<std::size_t>(args.lengths[r]) * 2 * layout.width * element_bytes;
    for (int layer = 0; layer < layout.layers; ++layer) {
      const long source = parent * layout.row_elements() + layer * layout.layer_elements();
      const long target = r * layout.row_elements() + layer * layout.layer_elements();
      std::memcpy(out + target * element_bytes, in + source * element_bytes, bytes);
    }
  }
}

void cache_resize_cpu(const CacheResizeArgs& args) {
  const std::size_t element_bytes = precision_size(args.precision);
  const CacheLayout& in_layout = args.in_layout;
  const CacheLayout& out_layout = args.out_layout;
  const int positions = std::min(in_layout.capacity, out_layout.capacity);
  const std::size_t bytes =
      static_cast<std::size_t>(positions) * 2 * in_layout.width * element_bytes;
  const auto* in = static_cast<const std::byte*>(args.in);
  auto* out = static_cast<std::byte*>(args.out);
  for (int r = 0; r < args.rows; ++r) {
    for (int layer = 0; layer < in_layout.layers; ++layer) {
      const long source = r * in_layout.row_elements() + layer * in_layout.layer_elements();
      const long target = r * out_layout.row_elements() + layer * out_layout.layer_elements();
      std::memcpy(out + target * element_bytes, in + source * element_bytes, bytes);
    }
  }
}

}  // namespace rpt::kernels
