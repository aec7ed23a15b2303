#include "cli/progress_line.h"

#include <unistd.h>

#include <cstdio>

namespace rpt::tools {

ProgressLine::ProgressLine(std::string label, std::string unit, bool enabled)
    : label_(std::move(label)), unit_(std::move(unit)), enabled_(enabled && isatty(2) == 1) {}

ProgressLine::~ProgressLine() {
  if (!drawn_) return;
  draw(last_done_, last_total_);  // the final count, whatever the rate limit skipped
  std::fputc('\n', stderr);
}

void ProgressLine::update(long done, std::optional<long> total) {
  if (!enabled_) return;
  last_done_ = done;
  last_total_ = total;
  const auto now = Clock::now();
  if (drawn_ && now - last_draw_ < std::chrono::milliseconds(200)) return;
  last_draw_ = now;
  draw(done, total);
}

void ProgressLine::draw(long done, std::optional<long> total) {
  const double seconds = std::chrono::duration<double>(Clock::now() - start_).count();
  const double rate = seconds > 0 ? static_cast<double>(done) / seconds : 0.0;
  // \r and "erase to the end of the line": the line is redrawn in place.
  std::fprintf(stderr, "\r%s: %ld", label_.c_str(), done);
  if (total) std::fprintf(stderr, "/%ld", *total);
  std::fprintf(stderr, " %s, %.1f %s/s", unit_.c_str(), rate, unit_.c_str());
  if (total && rate > 0 && done < *total) {
    std::fprintf(stderr, ", ETA %.0f s", static_cast<double>(*total - done) / rate);
  }
  std::fputs("\033[K", stderr);
  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace rpt::tools
