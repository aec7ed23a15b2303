// The CPU thread pool: chunks cover the range exactly once, nested and concurrent callers fall
// back to running serially, a GEMM split across threads equals the single call (within 1e-5
// relative: the libraries may block a narrower slice differently), and splits over column blocks
// cover the product once.
#include "kernels/parallel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>
#include <utility>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include "kernels/gemm.h"

namespace rpt::kernels {
namespace {

TEST(ParallelFor, CoversTheRangeOnceWithAtLeastMinChunkItems) {
  set_cpu_threads(3);
  EXPECT_EQ(cpu_threads(), 3);
  for (long count : {0L, 1L, 5L, 64L, 1001L}) {
    std::vector<std::atomic<int>> hits(static_cast<std::size_t>(count));
    std::atomic<long> smallest{count};
    parallel_for(count, 4, [&](long first, long last) {
      long seen = smallest.load();
      while (last - first < seen && !smallest.compare_exchange_weak(seen, last - first)) {
      }
      for (long i = first; i < last; ++i) hits[static_cast<std::size_t>(i)]++;
    });
    for (long i = 0; i < count; ++i) EXPECT_EQ(hits[static_cast<std::size_t>(i)], 1) << i;
    if (count >= 4) {
      EXPECT_GE(smallest.load(), 4) << "count " << count;
    }
  }
}

// Chunks of unequal items: the range is covered once, the chunks' costs are even (the heaviest
// at most the mean plus the largest item), and a range cheaper than two chunks stays whole.
TEST(ParallelForBalanced, CoversTheRangeOnceInChunksOfEvenCost) {
  set_cpu_threads(3);
  std::mt19937 random(7);
  for (long count : {0L, 1L, 2L, 7L, 128L, 512L}) {
    std::vector<long> costs(static_cast<std::size_t>(count));
    for (long& cost : costs) cost = 1 + static_cast<long>(random() % 200);
    if (count > 4) costs[static_cast<std::size_t>(count / 2)] = 5000;  // one run-away row
    long total = 0;
    long largest = 0;
    for (long cost : costs) {
      total += cost;
      largest = std::max(largest, cost);
    }
    std::vector<std::atomic<int>> hits(costs.size());
    std::mutex mutex;
    std::vector<long> chunk_costs;
    parallel_for_balanced(costs, 1, [&](long first, long last) {
      long cost = 0;
      for (long i = first; i < last; ++i) {
        hits[static_cast<std::size_t>(i)]++;
        cost += costs[static_cast<std::size_t>(i)];
      }
      std::lock_guard lock(mutex);
      chunk_costs.push_back(cost);
    });
    for (long i = 0; i < count; ++i) EXPECT_EQ(hits[static_cast<std::size_t>(i)], 1) << i;
    if (count == 0) continue;
    EXPECT_EQ(chunk_costs.size(), static_cast<std::size_t>(std::min(count, 3L))) << count;
    ASSERT_GT(total, 0);
    for (long cost : chunk_costs) EXPECT_LE(cost, total / 3 + largest) << "count " << count;
  }
  std::vector<long> cheap(100, 1);
  std::atomic<int> calls{0};
  parallel_for_balanced(cheap, 60, [&](long first, long last) {
    EXPECT_EQ(first, 0);
    EXPECT_EQ(last, 100);
    ++calls;
  });
  EXPECT_EQ(calls.load(), 1);
}

TEST(ParallelFor, NestedAndConcurrentCallersFinish) {
  set_cpu_threads(2);
  std::atomic<long> total{0};
  auto work = [&] {
    parallel_for(100, 1, [&](long first, long last) {
      for (long i = first; i < last; ++i) {
        parallel_for(10, 1, [&](long a, long b) { total += b - a; });  // nested: serial
      }
    });
  };
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c) callers.emplace_back(work);
  for (auto& caller : callers) caller.join();
  EXPECT_EQ(total.load(), 4 * 100 * 10);
}

// A chunk that throws, on a worker or on the caller, reaches the caller as an exception after
// every other chunk has run; the pool then works as before (no thread left marked as inside a
// parallel region, no process terminated).
TEST(ParallelFor, AChunksExceptionReachesTheCallerAfterEveryChunkRan) {
  set_cpu_threads(3);
  for (const long throwing_chunk_start : {0L, 600L}) {  // the caller's chunk, a worker's
    std::atomic<long> covered{0};
    EXPECT_THROW(parallel_for(900, 1,
                              [&](long first, long last) {
                                covered += last - first;
                                if (first == throwing_chunk_start) {
                                  throw std::runtime_error("chunk failed");
                                }
                              }),
                 std::runtime_error)
        << "throwing chunk at " << throwing_chunk_start;
    EXPECT_EQ(covered.load(), 900) << "every chunk ran to its end";
    std::atomic<int> chunks{0};
    parallel_for(900, 1, [&](long, long) { ++chunks; });
    EXPECT_EQ(chunks.load(), 3) << "the pool still splits work after an exception";
  }
  set_cpu_threads(0);
}

// Rows split across threads (m >= n) and columns split (n > m) give the one-call result up to
// rounding: OpenBLAS blocks differently for other sizes, so the last bits may differ (as they
// already do between batch sizes); an offset mistake in a chunk would be off by whole values.
TEST(ParallelFor, SplitGemmMatchesOneCall) {
  std::mt19937 random(2);
  std::normal_distribution<float> normal;
  for (const auto& [m, n] : {std::pair{300, 130}, std::pair{130, 300}}) {
    const int k = 96;
    std::vector<float> a(static_cast<std::size_t>(m) * k), b(static_cast<std::size_t>(n) * k);
    for (float& x : a) x = normal(random);
    for (float& x : b) x = normal(random);
    std::vector<float> serial(static_cast<std::size_t>(m) * n), split(serial.size());
    const GemmArgs args{.transpose_b = true,
                        .m = m,
                        .n = n,
                        .k = k,
                        .a = a.data(),
                        .lda = k,
                        .b = b.data(),
                        .ldb = k,
                        .c = nullptr,
                        .ldc = n};
    set_cpu_threads(1);
    GemmArgs one = args;
    one.c = serial.data();
    gemm_cpu(one);
    set_cpu_threads(2);
    GemmArgs two = args;
    two.c = split.data();
    gemm_cpu(two);
    for (std::size_t i = 0; i < serial.size(); ++i) {
      EXPECT_NEAR(serial[i], split[i], 1e-5 * std::max(1.0f, std::abs(serial[i])))
          << (m >= n ? "rows split, " : "columns split, ") << "element " << i;
    }
  }
}

// Whole column blocks or rows per part, each (row, block) once: along the blocks when they spread
// evenly, along the rows when they would not (3 blocks on 2 threads), on the caller alone below
// the work worth splitting.
TEST(ParallelFor, ColumnBlocksCoverTheProductOnce) {
  struct Case {
    long m, n, k, block_columns;
    int threads;
    bool rows_split;  // every part has all the blocks
    long parts;
  };
  for (const Case c : {Case{128, 8000, 256, 256, 2, false, 2}, Case{128, 768, 256, 256, 2, true, 2},
                       Case{4, 768, 256, 256, 2, false, 2}, Case{16, 256, 1024, 256, 2, true, 2},
                       Case{600, 1024, 256, 256, 3, true, 3}, Case{2, 300, 256, 256, 2, true, 1},
                       Case{128, 1000, 256, 256, 1, true, 1}}) {
    set_cpu_threads(c.threads);
    const long blocks = (c.n + c.block_columns - 1) / c.block_columns;
    std::vector<std::atomic<int>> hits(static_cast<std::size_t>(c.m * blocks));
    std::atomic<long> parts{0};
    std::atomic<bool> all_blocks{true};
    parallel_gemm_column_blocks(c.m, c.n, c.k, c.block_columns,
                                [&](long m0, long m1, long b0, long b1) {
                                  ++parts;
                                  if (b0 != 0 || b1 != blocks) all_blocks = false;
                                  for (long r = m0; r < m1; ++r) {
                                    for (long b = b0; b < b1; ++b) ++hits[r * blocks + b];
                                  }
                                });
    for (const auto& hit : hits) ASSERT_EQ(hit, 1) << c.m << " x " << c.n;
    EXPECT_EQ(parts, c.parts) << c.m << " x " << c.n;
    EXPECT_EQ(all_blocks, c.rows_split) << c.m << " x " << c.n;
  }
  set_cpu_threads(0);
}

}  // namespace
}  // namespace rpt::kernels
