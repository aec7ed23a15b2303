// A progress line on stderr for long jobs: items done (of the total once known), items per second
// and, with a total, the time left. Redrawn in place at most 5 times a second; drawn only when
// enabled and stderr is a terminal (never into a log file or a pipe).
//
// Not thread-safe.
#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace rpt::tools {

class ProgressLine {
 public:
  // `label` starts the line ("rpt-translate"), `unit` names the items ("sentences").
  ProgressLine(std::string label, std::string unit, bool enabled);
  // Ends the line (a newline) when anything was drawn.
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  void update(long done, std::optional<long> total);

 private:
  using Clock = std::chrono::steady_clock;
  void draw(long done, std::optional<long> total);

  std::string label_;
  std::string unit_;
  bool enabled_;
  bool drawn_ = false;
  Clock::time_point start_ = Clock::now();
  Clock::time_point last_draw_{};
  long last_done_ = -1;
  std::optional<long> last_total_;
};

}  // namespace rpt::tools
