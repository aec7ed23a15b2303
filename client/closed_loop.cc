#include "client/closed_loop.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>

namespace rpt::client {

LoadResult run_closed_loop(Caller& caller, const Corpus& corpus, const CallOptions& calls,
                           const ClosedLoopOptions& options) {
  LoadResult result("closed", calls.texts_per_call, calls.slo_seconds);
  result.concurrency = options.concurrency;
  const long total = static_cast<long>(corpus.lines()) * options.repeat;
  const long per_call = calls.texts_per_call;

  std::mutex mutex;  // guards result and in_flight
  std::condition_variable call_ended;
  long in_flight = 0;
  // This thread sends every call, so a call that ends inside start() cannot start the next one
  // within it (no recursion), and no thread waits on each call.
  const auto start = Clock::now();
  for (long first = 0; first < total; first += per_call) {
    {
      std::unique_lock lock(mutex);
      call_ended.wait(lock, [&] { return in_flight < options.concurrency; });
      ++in_flight;
    }
    const auto sent = Clock::now();
    caller.start(corpus.texts(first, std::min(per_call, total - first)),
                 sent + to_duration(calls.timeout_seconds), [&, sent](CallOutcome outcome) {
                   const double latency = seconds_since(sent);
                   std::lock_guard lock(mutex);
                   result.record(latency, outcome);
                   --in_flight;
                   call_ended.notify_one();
                 });
  }
  std::unique_lock lock(mutex);
  call_ended.wait(lock, [&] { return in_flight == 0; });
  result.seconds = seconds_since(start);
  return result;
}

}  // namespace rpt::client
