#include <algorithm>
#include <cstdint>
#include <initializer_list>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/precision.cuh"
#include "kernels/kv_cache.h"

namespace rpt::kernels {
namespace {

// The cache ops only move elements, so they copy in the widest unit (16, 8, 4 or 2 bytes) that
// divides every address and byte offset they touch: with width a multiple of 8, a warp moves
// 512 contiguous bytes per load instead of 64 with 2-byte elements.
int copy_unit_bytes(std::initializer_list<std::uintptr_t> addresses_and_offsets) {
  for (const int unit : {16, 8, 4}) {
    const bool divides_all = std::all_of(
        addresses_and_offsets.begin(), addresses_and_offsets.end(),
        [unit](std::uintptr_t value) { return value % static_cast<std::uintptr_t>(unit) == 0; });
    if (divides_all) return unit;
  }
  return 2;  // every element is at least 2 bytes and 2-byte aligned
}

// Calls fn(Unit{}) with Unit a trivially copyable type of `unit_bytes` bytes.
template <typename Fn>
void dispatch_unit(int unit_bytes, Fn&& fn) {
  switch (unit_bytes) {
    case 16:
      fn(uint4{});
      return;
    case 8:
      fn(uint2{});
      return;
    case 4:
      fn(std::uint32_t{});
      return;
    default:
      fn(std::uint16_t{});
      return;
  }
}

constexpr int kThreads = 256;
// Blocks along one (row, layer) segment of the gather and resize grids: enough threads to move a
// long segment in a few strides, few enough that short segments leave little idle.
constexpr int kMaxSegmentBlocks = 8;

// One thread per unit of one row's key and value: cache[r, layer, positions[r]] = qkv[r, K:V].
template <typename Unit>
__global__ void cache_append_kernel(const Unit* qkv,               // [rows, qkv_stride] in units
                                    long qkv_stride,               // units
                                    long key_offset,               // units: column width
                                    const int* positions,          // [rows]
                                    int rows, long segment_units,  // 2 width, in units
                                    long row_units, long layer_offset,  // units
                                    Unit* cache) {  // [rows, layers, capacity, 2, width]
  const long total = static_cast<long>(rows) * segment_units;
  for (long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<long>(gridDim.x) * blockDim.x) {
    const long r = i / segment_units;
    const long column = i % segment_units;
    cache[r * row_units + layer_offset + positions[r] * segment_units + column] =
        qkv[r * qkv_stride + key_offset + column];
  }
}

// blockIdx.y strides over (out row, layer) pairs, the x dimension over the positions copied.
template <typename Unit>
__global__ void cache_gather_kernel(const Unit* in,      // [any, layers, capacity, 2, width]
                                    const int* parents,  // [rows]
                                    const int* lengths,  // [rows]
                                    int rows, int layers,
                                    long layer_units,     // capacity * 2 width, in units
                                    long position_units,  // 2 width, in units
                                    Unit* out) {          // [rows, layers, capacity, 2, width]
  const long row_layers = static_cast<long>(rows) * layers;
  for (long row_layer = blockIdx.y; row_layer < row_layers; row_layer += gridDim.y) {
    const long r = row_layer / layers;
    const long layer = row_layer % layers;
    const int parent = parents[r];
    if (parent < 0) continue;  // a new sentence: its row is left as it is
    const long count = lengths[r] * position_units;
    const Unit* source = in + (static_cast<long>(parent) * layers + layer) * layer_units;
    Unit* target = out + row_layer * layer_units;
    for (long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<long>(gridDim.x) * blockDim.x) {
      target[i] = source[i];
    }
  }
}

template <typename Unit>
__global__ void cache_resize_kernel(const Unit* in,        // [rows, layers, in capacity, 2, d]
                                    long in_layer_units,   // in capacity * 2 d, in units
                                    long row_layers,       // rows * layers
                                    long count,            // units copied per (row, layer)
                                    long out_layer_units,  // out capacity * 2 d, in units
                                    Unit* out) {           // [rows, layers, out capacity, 2, d]
  for (long row_layer = blockIdx.y; row_layer < row_layers; row_layer += gridDim.y) {
    const Unit* source = in + row_layer * in_layer_units;
    Unit* target = out + row_layer * out_layer_units;
    for (long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<long>(gridDim.x) * blockDim.x) {
      target[i] = source[i];
    }
  }
}

// A grid over (row, layer) segments of up to `segment_units` units.
dim3 segment_grid(long row_layers, long segment_units) {
  return dim3(std::min(grid_blocks(segment_units, kThreads), kMaxSegmentBlocks),
              static_cast<unsigned>(std::min<long>(row_layers, 65535)));
}

std::uintptr_t address(const void* pointer) { return reinterpret_cast<std::uintptr_t>(pointer); }

}  // namespace

void cache_append_cuda(const CacheAppendArgs& args, CudaStream stream) {
  if (args.rows == 0 || args.layout.width == 0) return;
  const long element_bytes = static_cast<long>(precision_size(args.precision));
  const long width_bytes = args.layout.width * element_bytes;
  const long qkv_stride_bytes = args.qkv_stride * element_bytes;
  const int unit = copy_unit_bytes({address(args.qkv), address(args.cache),
                                    static_cast<std::uintptr_t>(width_bytes),
                                    static_cast<std::uintptr_t>(qkv_stride_bytes)});
  // Every offset below is a multiple of width_bytes or qkv_stride_bytes, so of the unit.
  const long segment_units = 2 * width_bytes / unit;
  const long total = args.rows * segment_units;
  dispatch_unit(unit, [&](auto zero) {
    using Unit = decltype(zero);
    cache_append_kernel<Unit><<<grid_blocks(total, kThreads), kThreads, 0, stream>>>(
        static_cast<const Unit*>(args.qkv), qkv_stride_bytes / unit, width_bytes / unit,
        args.positions, args.rows, segment_units, args.layout.row_elements() * element_bytes / unit,
        args.layer * args.layout.layer_elements() * element_bytes / unit,
        static_cast<Unit*>(args.cache));
  });
  RPT_CUDA_CHECK_LAUNCH();
}

void cache_gather_cuda(const CacheGatherArgs& args, CudaStream stream) {
  const CacheLayout& layout = args.layout;
  if (args.rows == 0 || layout.layers == 0 || layout.capacity == 0 || layout.width == 0) return;
  const long element_bytes = static_cast<long>(precision_size(args.precision));
  const long position_bytes = 2L * layout.width * element_bytes;
  const int unit = copy_unit_bytes(
      {address(args.in), address(args.out), static_cast<std::uintptr_t>(position_bytes)});
  const long position_units = position_bytes / unit;
  const long layer_units = layout.capacity * position_units;
  const long row_layers = static_cast<long>(args.rows) * layout.layers;
  dispatch_unit(unit, [&](auto zero) {
    using Unit = decltype(zero);
    cache_gather_kernel<Unit><<<segment_grid(row_layers, layer_units), kThreads, 0, stream>>>(
        static_cast<const Unit*>(args.in), args.parents, args.lengths, args.rows, layout.layers,
        layer_units, position_units, static_cast<Unit*>(args.out));
  });
  RPT_CUDA_CHECK_LAUNCH();
}

void cache_resize_cuda(const CacheResizeArgs& args, CudaStream stream) {
  const CacheLayout& in_layout = args.in_layout;
  const CacheLayout& out_layout = args.out_layout;
  const long row_layers = static_cast<long>(args.rows) * in_layout.layers;
  const int positions = std::min(in_layout.capacity, out_layout.capacity);
  if (row_layers == 0 || positions == 0 || in_layout.width == 0) return;
  const long element_bytes = static_cast<long>(precision_size(args.precision));
  const long position_bytes = 2L * in_layout.width * element_bytes;
  const int unit = copy_unit_bytes(
      {address(args.in), address(args.out), static_cast<std::uintptr_t>(position_bytes)});
  const long position_units = position_bytes / unit;
  const long count = positions * position_units;
  dispatch_unit(unit, [&](auto zero) {
    using Unit = decltype(zero);
    cache_resize_kernel<Unit><<<segment_grid(row_layers, count), kThreads, 0, stream>>>(
        static_cast<const Unit*>(args.in), in_layout.capacity * position_units, row_layers, count,
        out_layout.capacity * position_units, static_cast<Unit*>(args.out));
  });
  RPT_CUDA_CHECK_LAUNCH();
}

}  // namespace rpt::kernels
