// What rpt-loadgen's loops need of a protocol: start a Translate call of some texts with a
// deadline and hear how it ended. client/grpc_caller.h and client/http_caller.h implement it, so
// the closed and open loops (closed_loop.h, open_loop.h) are one piece of code for both.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "client/call_outcome.h"

namespace rpt::client {

using Clock = std::chrono::steady_clock;

inline Clock::duration to_duration(double seconds) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// What every call asks for, whatever the protocol.
struct TranslateSettings {
  std::string model;    // empty: the server's routing decides
  int beam_size = 0;    // 0: the server's default
  std::string api_key;  // empty: none; else sent as `authorization: Bearer KEY` (--api-keys)
};

// The calls of either loop (closed_loop.h, open_loop.h).
struct CallOptions {
  int texts_per_call = 1;
  // Each call's deadline, from its start: when it is sent (closed loop), its scheduled start
  // (open loop).
  double timeout_seconds = 120.0;
  double slo_seconds = 0.0;  // latency objective for goodput; 0: none
};

// Starts calls; thread-safe. Destroy it only once every call it started has ended.
class Caller {
 public:
  // Runs once per call on a thread of the caller's, possibly before start() returns (so never call
  // start() holding a lock that `done` takes); keep it short.
  using Done = std::function<void(CallOutcome)>;

  virtual ~Caller() = default;
  // Starts a call translating `texts` that ends by `deadline` (DEADLINE_EXCEEDED past it);
  // returns at once.
  virtual void start(std::vector<std::string> texts, Clock::time_point deadline, Done done) = 0;
};

}  // namespace rpt::client
