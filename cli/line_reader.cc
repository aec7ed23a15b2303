#include "cli/line_reader.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace rpt::tools {

std::optional<std::string> LineReader::next(bool wait) {
  while (true) {
    const std::size_t newline = buffer_.find('\n', start_);
    if (newline != std::string::npos || (end_ && start_ < buffer_.size())) {
      const std::size_t end = newline == std::string::npos ? buffer_.size() : newline;
      std::string line = buffer_.substr(start_, end - start_);
      start_ = newline == std::string::npos ? end : end + 1;
      last_line_terminated_ = newline != std::string::npos;
      if (start_ > (1 << 20)) {  // drop what was returned, now and then, not per line
        buffer_.erase(0, start_);
        start_ = 0;
      }
      ++lines_;
      return line;
    }
    if (end_) return std::nullopt;
    const std::size_t before = buffer_.size();
    fill(wait ? -1 : 0);
    if (!wait && buffer_.size() == before && !end_) return std::nullopt;
  }
}

std::optional<long> LineReader::total() const {
  if (!end_) return std::nullopt;
  long rest = 0;
  for (std::size_t i = start_; i < buffer_.size(); ++i) rest += buffer_[i] == '\n';
  const bool unterminated = start_ < buffer_.size() && buffer_.back() != '\n';
  return lines_ + rest + (unterminated ? 1 : 0);
}

void LineReader::fill(int timeout_ms) {
  constexpr std::size_t kMostPerFill = 4 << 20;
  char chunk[1 << 16];
  for (std::size_t appended = 0; !end_ && appended < kMostPerFill;) {
    pollfd ready{.fd = fd_, .events = POLLIN, .revents = 0};
    const int polled = poll(&ready, 1, appended == 0 ? timeout_ms : 0);
    if (polled < 0 && errno != EINTR) {
      throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
    }
    if (polled <= 0) return;
    const ssize_t got = read(fd_, chunk, sizeof chunk);
    if (got < 0) {
      if (errno == EINTR || errno == EAGAIN) return;
      throw std::runtime_error(std::string("cannot read the input: ") + std::strerror(errno));
    }
    end_ = got == 0;
    buffer_.append(chunk, static_cast<std::size_t>(got));
    appended += static_cast<std::size_t>(got);
  }
}

}  // namespace rpt::tools
