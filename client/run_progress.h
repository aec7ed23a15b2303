// The line rpt-loadgen keeps on stderr while an open-loop run lasts: the offered rate, the
// seconds of the run gone, calls sent and still in flight. Redrawn in place at most once a
// second; drawn only when enabled and stderr is a terminal (never into a log or a pipe).
//
// Not thread-safe.
#pragma once

#include <chrono>

namespace rpt::client {

class RunProgress {
 public:
  RunProgress(double rate, double run_seconds, bool enabled);
  // Ends the line (a newline) when anything was drawn.
  ~RunProgress();
  RunProgress(const RunProgress&) = delete;
  RunProgress& operator=(const RunProgress&) = delete;

  void update(long sent, long in_flight);

 private:
  using Clock = std::chrono::steady_clock;

  double rate_;
  double run_seconds_;
  bool enabled_;
  bool drawn_ = false;
  Clock::time_point start_ = Clock::now();
  Clock::time_point last_draw_{};
};

}  // namespace rpt::client
