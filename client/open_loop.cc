#include "client/open_loop.h"

#include <condition_variable>
#include <mutex>
#include <random>
#include <thread>

#include "client/run_progress.h"

namespace rpt::client {

LoadResult run_open_loop(Caller& caller, const Corpus& corpus, const CallOptions& calls,
                         const OpenLoopOptions& options) {
  LoadResult result("open", calls.texts_per_call, calls.slo_seconds);
  result.offered_rate = options.rate;
  result.arrivals = options.arrivals;
  result.seconds = options.duration_seconds;
  std::mt19937_64 random(options.seed);
  std::exponential_distribution<double> poisson_gap(options.rate);
  const bool poisson = options.arrivals == "poisson";
  const long per_call = calls.texts_per_call;

  std::mutex mutex;  // guards result and outstanding
  std::condition_variable finished;
  long outstanding = 0;

  RunProgress progress(options.rate, options.warmup_seconds + options.duration_seconds,
                       options.show_progress);
  const auto start = Clock::now();
  const auto measure_from = start + to_duration(options.warmup_seconds);
  const auto stop = measure_from + to_duration(options.duration_seconds);
  double offset = 0.0;  // seconds after start of the next arrival
  long sent = 0;
  for (;; ++sent) {
    offset += poisson ? poisson_gap(random) : 1.0 / options.rate;
    const auto scheduled = start + to_duration(offset);
    if (scheduled >= stop) break;
    std::this_thread::sleep_until(scheduled);
    long in_flight = 0;
    {
      std::lock_guard lock(mutex);
      in_flight = ++outstanding;
    }
    progress.update(sent + 1, in_flight);
    const bool measured = scheduled >= measure_from;
    // The deadline counts from the scheduled start too.
    caller.start(corpus.texts(sent * per_call, per_call),
                 scheduled + to_duration(calls.timeout_seconds),
                 [&, scheduled, measured](CallOutcome outcome) {
                   const double latency = seconds_since(scheduled);
                   std::lock_guard lock(mutex);
                   if (measured) result.record(latency, outcome);
                   if (--outstanding == 0) finished.notify_all();
                 });
  }
  std::unique_lock lock(mutex);
  while (!finished.wait_for(lock, std::chrono::seconds(1), [&] { return outstanding == 0; })) {
    progress.update(sent, outstanding);
  }
  return result;
}

}  // namespace rpt::client
