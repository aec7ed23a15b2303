// The integer products of quantized weights (kernels/int8_gemm.h), private to the CPU int8
// kernels: oneDNN's packed int8 GEMM on weights packed once at load, block by block (its
// internal API, looked up at run time), or its matmul primitive on plain weights.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/int8_gemm.h"

namespace rpt::kernels {

// Column blocks [first_block, first_block + blocks) of an n-wide matrix: the columns
// [first, first + count).
struct BlockRange {
  int first_block;
  int first;
  int count;
};

BlockRange block_range(int first_block, int blocks, int block_columns, int n);

// The integer sums of consecutive column blocks, at most blocks_per_call() of them:
// sums[r, j] = input[r, :] . qw[columns.first + j, :].
struct Int8Weights::Products {
  virtual ~Products() = default;
  virtual int blocks_per_call() const = 0;
  virtual void run(const std::uint8_t* input,  // [rows, k]
                   int rows, BlockRange columns,
                   std::int32_t* sums) const = 0;  // [rows, columns.count]
  virtual bool packed() const = 0;
  virtual std::size_t bytes() const = 0;
};

// Products of qw [n, k] in blocks of `block_columns` output features: packed when oneDNN can and
// packing adds at most half to the values' bytes (the layout pads a block's output features to
// the kernel's unroll and adds per-block headers and alignment, so small matrices, whose products
// cost little, stay plain; sizes: docs/PERFORMANCE.md "Packed int8 weights"), unless
// RPT_INT8_PACKED says otherwise (0: never, 1: always). `values` are taken by plain products, which
// keep them, and left to the caller by packed ones, which copy them.
std::unique_ptr<const Int8Weights::Products> int8_products(std::vector<std::int8_t>& values, int n,
                                                           int k, int block_columns);

// What the products run on, e.g. "onednn-2.6.3 packed avx2_vnni" (oneDNN's version, packed or
// matmul as RPT_INT8_PACKED and this oneDNN allow for a large matrix, the ISA oneDNN dispatches
// to on this CPU, ONEDNN_MAX_CPU_ISA applied).
std::string int8_products_description();

}  // namespace rpt::kernels
