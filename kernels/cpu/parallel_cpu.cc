#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "kernels/parallel.h"

namespace rpt::kernels {
namespace {

thread_local bool inside_parallel_for = false;

// Spins until done() or for `limit`; true if done() came true. A decoder step runs ~50
// parallel regions a few microseconds apart: waking a sleeping thread costs tens of them.
template <typename Done>
bool spin_until(Done done, std::chrono::microseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (int polls = 1;; ++polls) {
    if (done()) return true;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
    if (polls % 64 == 0 && std::chrono::steady_clock::now() > deadline) return false;
  }
}

constexpr std::chrono::microseconds kSpin{100};

// Workers wait for a generation number to change, run their chunk of the
// current job, and count themselves out; the caller runs chunk 0 and waits for
// the count to reach zero.
class ThreadPool {
 public:
  explicit ThreadPool(int threads) : threads_(std::max(1, threads)) {
    for (int worker = 1; worker < threads_; ++worker) {
      workers_.emplace_back([this, worker] { work(worker); });
    }
  }

  ~ThreadPool() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
      generation_.fetch_add(1);
    }
    wake_.notify_all();
    for (std::thread& worker : workers_) worker.join();
  }

  int threads() const { return threads_; }

  // False when another caller holds the pool; the caller then runs the range
  // itself.
  bool try_run(long count, long min_chunk, const std::function<void(long, long)>& fn) {
    std::unique_lock busy(busy_, std::try_to_lock);
    if (!busy.owns_lock()) return false;
    const long chunks =
        std::min<long>(threads_, std::max<long>(1, count / std::max(1L, min_chunk)));
    if (chunks <= 1) return false;
    {
      std::lock_guard lock(mutex_);
      job_ = &fn;
      count_ = count;
      chunks_ = chunks;
      pending_.store(static_cast<int>(chunks - 1));
      generation_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_all();
    run_chunk(0);
    const auto done = [this] { return pending_.load() == 0; };
    if (!spin_until(done, kSpin)) {
      std::unique_lock lock(mutex_);
      done_.wait(lock, done);
    }
    job_ = nullptr;
    // Every chunk has finished with fn (it lives in the caller's frame): only now may a
    // chunk's exception (std::bad_alloc, say) unwind the caller.
    std::exception_ptr error;
    {
      std::lock_guard lock(mutex_);
      std::swap(error, error_);
    }
    if (error) std::rethrow_exception(error);
    return true;
  }

 private:
  // Runs one chunk; an exception is kept (the first one) for the caller instead of escaping a
  // worker thread, which would terminate the process.
  void run_chunk(long chunk) {
    const long begin = count_ * chunk / chunks_;
    const long end = count_ * (chunk + 1) / chunks_;
    inside_parallel_for = true;
    try {
      (*job_)(begin, end);
    } catch (...) {
      std::lock_guard lock(mutex_);
      if (!error_) error_ = std::current_exception();
    }
    inside_parallel_for = false;
  }

  void work(int worker) {
    std::uint64_t seen = 0;
    while (true) {
      const auto fresh = [&] { return generation_.load(std::memory_order_acquire) != seen; };
      if (!spin_until(fresh, kSpin)) {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, fresh);
      }
      {
        std::lock_guard lock(mutex_);
        seen = generation_.load();
        if (stopping_) return;
        if (worker >= chunks_) continue;  // this job has fewer chunks than threads
      }
      run_chunk(worker);
      if (pending_.fetch_sub(1) == 1) {
        std::lock_guard lock(mutex_);
        done_.notify_one();
      }
    }
  }

  const int threads_;
  std::vector<std::thread> workers_;
  std::mutex busy_;  // held by the caller whose job runs
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  std::atomic<std::uint64_t> generation_{0};
  bool stopping_ = false;
  const std::function<void(long, long)>* job_ = nullptr;
  long count_ = 0;
  long chunks_ = 0;
  std::atomic<int> pending_{0};
  std::exception_ptr error_;  // the first exception of the current job's chunks (mutex_)
};

std::mutex pool_mutex;
std::shared_ptr<ThreadPool> pool_instance;

std::shared_ptr<ThreadPool> pool() {
  std::lock_guard lock(pool_mutex);
  if (!pool_instance) {
    pool_instance =
        std::make_shared<ThreadPool>(static_cast<int>(std::thread::hardware_concurrency()));
  }
  return pool_instance;
}

}  // namespace

void set_cpu_threads(int threads) {
  if (threads <= 0) threads = static_cast<int>(std::thread::hardware_concurrency());
  std::lock_guard lock(pool_mutex);
  if (pool_instance && pool_instance->threads() == threads) return;
  pool_instance = std::make_shared<ThreadPool>(threads);
}

int cpu_threads() { return pool()->threads(); }

void parallel_for(long count, long min_chunk, const std::function<void(long, long)>& fn) {
  if (count <= 0) return;
  if (!inside_parallel_for && pool()->try_run(count, min_chunk, fn)) return;
  fn(0, count);
}

void parallel_for_balanced(const std::vector<long>& costs, long min_chunk_cost,
                           const std::function<void(long, long)>& fn) {
  const auto count = static_cast<long>(costs.size());
  if (count == 0) return;
  std::vector<long> prefix(costs.size() + 1, 0);  // prefix[i]: cost of items [0, i)
  for (std::size_t i = 0; i < costs.size(); ++i) prefix[i + 1] = prefix[i] + costs[i];
  const long total = prefix.back();
  const long chunks =
      std::min<long>({cpu_threads(), count, std::max(1L, total / std::max(1L, min_chunk_cost))});
  if (chunks <= 1 || inside_parallel_for) {
    fn(0, count);
    return;
  }
  // An item goes to the chunk its cost's midpoint falls in: no chunk exceeds an even share by
  // more than the largest item (a chunk no midpoint falls in stays empty).
  std::vector<long> starts(static_cast<std::size_t>(chunks) + 1, count);
  for (long i = count - 1; i >= 0; --i) {
    const auto at = static_cast<std::size_t>(i);
    const long chunk = std::min(chunks - 1, (2 * prefix[at] + costs[at]) * chunks / (2 * total));
    starts[static_cast<std::size_t>(chunk)] = i;
  }
  starts[0] = 0;
  for (long c = chunks - 1; c > 0; --c) {  // a chunk no midpoint fell in starts where the next does
    starts[static_cast<std::size_t>(c)] =
        std::min(starts[static_cast<std::size_t>(c)], starts[static_cast<std::size_t>(c) + 1]);
  }
  parallel_for(chunks, 1, [&](long first, long last) {
    const long begin = starts[static_cast<std::size_t>(first)];
    const long end = starts[static_cast<std::size_t>(last)];
    if (begin < end) fn(begin, end);
  });
}

namespace {

constexpr long kSplitWork = 1L << 18;  // multiply-adds: below, splitting costs more than it saves
constexpr long kMinChunkRows = 16;

}  // namespace

void parallel_gemm_blocks(long m, long n, long k,
                          const std::function<void(long, long, long, long)>& block,
                          long column_multiple) {
  if (m * n * k < kSplitWork) {
    block(0, m, 0, n);
  } else if (m >= n) {
    parallel_for(m, kMinChunkRows, [&](long first, long last) { block(first, last, 0, n); });
  } else {
    // Split groups of `column_multiple` columns; the last group may be narrower.
    const long step = std::max(1L, column_multiple);
    const long groups = (n + step - 1) / step;
    parallel_for(groups, std::max(1L, 64 / step), [&](long first, long last) {
      block(0, m, first * step, std::min(n, last * step));
    });
  }
}

void parallel_gemm_column_blocks(long m, long n, long k, long block_columns,
                                 const std::function<void(long, long, long, long)>& part) {
  // Measured on int8 (kernels/int8_gemm.h): oneDNN's packed products keep their speed on chunks
  // of a few rows, so 8 or 12 rows of a single block still split.
  constexpr long kMinBlockChunkRows = 4;
  const long blocks = (n + block_columns - 1) / block_columns;
  if (m * n * k < kSplitWork) {
    part(0, m, 0, blocks);
    return;
  }
  const long threads = cpu_threads();
  const long busiest = (blocks + threads - 1) / threads;  // blocks of the busiest thread
  const bool even = (busiest * threads - blocks) * 8 <= busiest * threads;
  if (m < n && blocks > 1 && (even || m < 2 * kMinBlockChunkRows)) {
    parallel_for(blocks, 1, [&](long first, long last) { part(0, m, first, last); });
  } else {
    parallel_for(m, kMinBlockChunkRows,
                 [&](long first, long last) { part(first, last, 0, blocks); });
  }
}

}  // namespace rpt::kernels
