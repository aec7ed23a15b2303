#include "client/run_progress.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace rpt::client {

RunProgress::RunProgress(double rate, double run_seconds, bool enabled)
    : rate_(rate), run_seconds_(run_seconds), enabled_(enabled && isatty(2) == 1) {}

RunProgress::~RunProgress() {
  if (drawn_) std::fputc('\n', stderr);
}

void RunProgress::update(long sent, long in_flight) {
  const auto now = Clock::now();
  if (!enabled_ || (drawn_ && now - last_draw_ < std::chrono::seconds(1))) return;
  last_draw_ = now;
  drawn_ = true;
  const double gone = std::chrono::duration<double>(now - start_).count();
  // \r and "erase to the end of the line": the line is redrawn in place.
  std::fprintf(stderr,
               "\rrpt-loadgen: %g calls/s offered, %.0f/%.0f s, %ld sent, %ld in flight\033[K",
               rate_, std::min(gone, run_seconds_), run_seconds_, sent, in_flight);
  std::fflush(stderr);
}

}  // namespace rpt::client
