// The decoder's self-attention cache on the device side of the engine, one buffer for every row
// (a beam of a sentence): cache [rows, layers, capacity, 2, width], position p of layer l of row r
// holding keys then values (width = attention_dim). append writes this step's key and value of
// one layer for every row at the row's own position; gather rearranges rows between steps (beam
// reordering: row r continues old row parents[r]); resize changes the capacity.
#pragma once

#include <algorithm>

#include "kernels/precision.h"
#include "kernels/stream.h"

namespace rpt::kernels {

struct CacheLayout {
  int layers = 0;
  int capacity = 0;  // positions per row and layer
  int width = 0;     // of one position's keys (and of its values)
  long row_elements() const { return static_cast<long>(layers) * capacity * 2 * width; }
  long layer_elements() const { return static_cast<long>(capacity) * 2 * width; }
};

// The capacity a cache of `capacity` positions grows to when a step needs `needed` (more than it
// holds): half as much again (at least 16 more), in multiples of 16, but never past `limit` (the
// most positions the searches decoding into it can reach) unless `needed` is. Growth copies the
// cache once; a capacity of twice the longest sentence would hold up to twice the memory.
inline int grown_cache_capacity(int capacity, int needed, int limit) {
  constexpr int kQuantum = 16;
  const int wanted = std::max(needed, capacity + std::max(kQuantum, capacity / 2));
  const int rounded = (wanted + kQuantum - 1) / kQuantum * kQuantum;
  return std::max(needed, std::min(rounded, limit));
}

struct CacheAppendArgs {
  Precision precision = Precision::kFloat32;  // of qkv and cache
  CacheLayout layout;
  int layer = 0;
  int rows = 0;
  const void* qkv = nullptr;  // [rows, qkv_stride]: the key at column width, value at 2 width
  int qkv_stride = 0;
  const int* positions = nullptr;  // [rows] (device for CUDA): where each row writes, < capacity
  void* cache = nullptr;           // [rows, layers, capacity, 2, width]
};

// The CPU engine keeps its cache as a tree of positions (engine/cpu/position_tree.h); these
// kernels are tested against tests/support/reference_kernels.h.
void cache_append_cuda(const CacheAppendArgs& args, CudaStream stream);

struct CacheGatherArgs {
  Precision precision = Precision::kFloat32;
  CacheLayout layout;        // of both caches
  int rows = 0;              // rows of `out`
  const void* in = nullptr;  // [any rows, layers, capacity, 2, width]
  // [rows] (device for CUDA): out row r copies positions [0, lengths[r]) of every layer of in
  // row parents[r]; parents[r] < 0 leaves out row r untouched (a new sentence).
  const int* parents = nullptr;
  const int* lengths = nullptr;
  void* out = nullptr;  // [rows, layers, capacity, 2, width]; must not alias in
};

void cache_gather_cuda(const CacheGatherArgs& args, CudaStream stream);

// Copies a cache into one of another capacity (growth): positions [0, min capacity) of every
// row and layer.
struct CacheResizeArgs {
  Precision precision = Precision::kFloat32;
  int rows = 0;
  CacheLayout in_layout;
  const void* in = nullptr;
  CacheLayout out_layout;  // same layers and width
  void* out = nullptr;
};

void cache_resize_cpu(const CacheResizeArgs& args);
void cache_resize_cuda(const CacheResizeArgs& args, CudaStream stream);

}  // namespace rpt::kernels
