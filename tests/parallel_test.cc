// The CPU thread pool: chunks cover the range exactly once, nested and concurrent callers fall
// back to running serially, and a GEMM split across threads equals the single call (within 1e-5
// relative: the libraries may block a narrower slice differently).
#include "kernels/parallel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
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
    const GemmArgs args{.transpose_b = true, .m = m, .n = n, .k = k, .a = a.data(), .lda = k,
                        .b = b.data(), .ldb = k, .c = nullptr, .ldc = n};
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

}  // namespace
}  // namespace rpt::kernels
