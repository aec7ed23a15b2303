// Lines of a file descriptor (stdin) as they arrive. next() waits only when told to, so a
// decoder keeps stepping while a slow producer (a pipe) writes the rest.
//
// Not thread-safe; does not own the descriptor.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace rpt::tools {

class LineReader {
 public:
  explicit LineReader(int fd) : fd_(fd) {}

  // The next line without its '\n' (a last line without one counts). With `wait`, blocks until
  // one is complete; otherwise nullopt when none is yet. nullopt at the end of input too.
  std::optional<std::string> next(bool wait);
  // True once the input has ended and every line was returned.
  bool finished() const { return end_ && start_ == buffer_.size(); }
  // Lines returned so far.
  long lines() const { return lines_; }
  // Whether the line next() returned last ended with '\n' (false only for an input's last line
  // without one: its translation is written without one either, as the file was).
  bool last_line_terminated() const { return last_line_terminated_; }
  // Every line of the input, once its end has been read (a file's at the first next()).
  std::optional<long> total() const;

 private:
  // Reads what the descriptor has (up to a few MiB), waiting up to `timeout_ms` for the first
  // bytes (-1: until data or the end).
  void fill(int timeout_ms);

  int fd_;
  std::string buffer_;
  std::size_t start_ = 0;  // first byte of buffer_ not yet returned
  bool end_ = false;
  long lines_ = 0;
  bool last_line_terminated_ = true;
};

}  // namespace rpt::tools
