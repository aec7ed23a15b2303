#include "client/open_loop.h"

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "client/run_progress.h"

namespace rpt::client {
namespace {

using Clock = std::chrono::steady_clock;

struct PendingCall {
  grpc::ClientContext context;
  v1::TranslateRequest request;
  v1::TranslateResponse response;
  Clock::time_point scheduled;
  bool measured = false;
};

Clock::duration seconds(double value) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(value));
}

}  // namespace

LoadResult run_open_loop(v1::Translator::Stub& stub, const RequestMaker& make_request,
                         const OpenLoopOptions& options) {
  LoadResult result;
  result.mode = "open";
  result.offered_rate = options.rate;
  result.arrivals = options.arrivals;
  result.seconds = options.duration_seconds;
  result.slo_seconds = options.slo_seconds;
  std::mt19937_64 random(options.seed);
  std::exponential_distribution<double> poisson_gap(options.rate);
  const bool poisson = options.arrivals == "poisson";

  std::mutex mutex;  // guards result and outstanding
  std::condition_variable finished;
  long outstanding = 0;
  std::vector<std::unique_ptr<PendingCall>> calls;  // alive until every callback has run

  RunProgress progress(options.rate, options.warmup_seconds + options.duration_seconds,
                       options.show_progress);
  const auto start = Clock::now();
  const auto measure_from = start + seconds(options.warmup_seconds);
  const auto stop = measure_from + seconds(options.duration_seconds);
  double offset = 0.0;  // seconds after start of the next arrival
  for (long i = 0;; ++i) {
    offset += poisson ? poisson_gap(random) : 1.0 / options.rate;
    const auto scheduled = start + seconds(offset);
    if (scheduled >= stop) break;
    std::this_thread::sleep_until(scheduled);
    auto call = std::make_unique<PendingCall>();
    call->request = make_request(i);
    call->scheduled = scheduled;
    call->measured = scheduled >= measure_from;
    // The deadline counts from the scheduled start too (converted to the system clock gRPC uses).
    call->context.set_deadline(std::chrono::system_clock::now() +
                               (scheduled + seconds(options.timeout_seconds) - Clock::now()));
    PendingCall* pending = call.get();
    calls.push_back(std::move(call));
    long in_flight = 0;
    {
      std::lock_guard lock(mutex);
      in_flight = ++outstanding;
    }
    progress.update(i + 1, in_flight);
    const auto on_done = [&, pending](grpc::Status status) {
      const double latency =
          std::chrono::duration<double>(Clock::now() - pending->scheduled).count();
      std::lock_guard lock(mutex);
      if (pending->measured) result.record(latency, status, pending->response);
      if (--outstanding == 0) finished.notify_all();
    };
    stub.async()->Translate(&pending->context, &pending->request, &pending->response, on_done);
  }
  std::unique_lock lock(mutex);
  while (!finished.wait_for(lock, std::chrono::seconds(1), [&] { return outstanding == 0; })) {
    progress.update(static_cast<long>(calls.size()), outstanding);
  }
  return result;
}

}  // namespace rpt::client
