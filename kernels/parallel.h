// The CPU threads of rpt: one pool shared by every CPU op, GEMMs included (BLIS and oneDNN run
// single-threaded inside each chunk). parallel_for splits [0, count) into contiguous chunks, one
// per thread (the caller runs the first); serially when the range is small, when nested, or while
// another caller holds the pool: never a deadlock, never oversubscription. Thread-safe. Idle
// threads spin for up to 100 µs before sleeping (why: docs/ARCHITECTURE.md "Design notes").
#pragma once

#include <functional>
#include <vector>

namespace rpt::kernels {

// Threads the CPU ops use, the caller included (0: the machine's hardware threads).
void set_cpu_threads(int threads);
int cpu_threads();

// Calls fn(begin, end) on disjoint chunks covering [0, count); chunks hold at least
// `min_chunk` items (fewer only when count itself is smaller). If a chunk throws, the other
// chunks still run to their end and the first exception is rethrown to the caller.
void parallel_for(long count, long min_chunk, const std::function<void(long, long)>& fn);

// parallel_for over items of unequal cost: fn(begin, end) on contiguous chunks of about equal
// total cost (costs[i] >= 0, in any unit), one chunk per thread, and on the caller alone when
// the whole range costs less than two chunks of `min_chunk_cost`. For the attention of a decoder
// step, whose rows read caches of different lengths: equal counts left one thread waiting.
void parallel_for_balanced(const std::vector<long>& costs, long min_chunk_cost,
                           const std::function<void(long, long)>& fn);

// Runs block(m0, m1, n0, n1) over the blocks of an [m, n] matrix product with k-long sums (the
// GEMMs): on the caller alone below 2^18 multiply-adds, else split over the threads along the
// larger of m (chunks of at least 16 rows) and n (64 columns; blocks start at multiples of
// `column_multiple`). Never along k: each element's sum stays one sequence, whatever else the
// call holds.
void parallel_gemm_blocks(long m, long n, long k,
                          const std::function<void(long, long, long, long)>& block,
                          long column_multiple = 1);

// Runs part(m0, m1, b0, b1) over an [m, n] product with k-long sums whose columns come in blocks
// of `block_columns` (the last may be narrower), each part whole blocks [b0, b1): on the caller
// alone below 2^18 multiply-adds, else split over the threads along the blocks when m < n and
// the blocks spread evenly over the threads (at most 1/8 of the threads' share idle) or m has
// too few rows to split, else along m (chunks of at least 4 rows).
void parallel_gemm_column_blocks(long m, long n, long k, long block_columns,
                                 const std::function<void(long, long, long, long)>& part);

}  // namespace rpt::kernels
