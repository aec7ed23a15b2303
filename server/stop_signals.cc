#include "server/stop_signals.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <stdexcept>

#include <spdlog/spdlog.h>

namespace rpt::server {
namespace {

// The pipe's write end, for the handler (a signal handler can reach only globals).
std::atomic<int> g_write_end{-1};

extern "C" void on_stop_signal(int signal) {
  const int saved = errno;
  const auto number = static_cast<unsigned char>(signal);
  const int fd = g_write_end.load();
  if (fd >= 0) {
    const ssize_t written = ::write(fd, &number, 1);  // a full pipe drops it: one is pending
    static_cast<void>(written);
  }
  errno = saved;
}

// Reads one signal number; -1 when none came within `timeout_ms` (-1: wait for ever).
int read_signal(int fd, int timeout_ms) {
  pollfd ready{fd, POLLIN, 0};
  const int result = ::poll(&ready, 1, timeout_ms);
  if (result <= 0) return -1;  // timeout, or EINTR (the handler ran in this thread): look again
  unsigned char number = 0;
  return ::read(fd, &number, 1) == 1 ? number : -1;
}

}  // namespace

const char* signal_name(int signal) {
  switch (signal) {
    case SIGTERM:
      return "SIGTERM";
    case SIGINT:
      return "SIGINT";
    case SIGHUP:
      return "SIGHUP";
    default:
      return "a stop signal";
  }
}

StopSignals::StopSignals() {
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC | O_NONBLOCK) != 0) {
    throw std::runtime_error("cannot create the signal pipe");
  }
  read_end_ = ends[0];
  g_write_end.store(ends[1]);
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGHUP, &action, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
}

StopSignals::~StopSignals() {
  stopping_.store(true);
  if (watcher_.joinable()) watcher_.join();
  // The handlers stay (a late signal must not kill a process that is about to exit 0); they
  // find no pipe and do nothing.
  const int write_end = g_write_end.exchange(-1);
  ::close(write_end);
  ::close(read_end_);
}

int StopSignals::wait(const std::function<void()>& on_hangup) {
  for (;;) {
    const int signal = read_signal(read_end_, -1);
    if (signal == SIGHUP) {
      if (on_hangup) on_hangup();
    } else if (signal >= 0) {
      return signal;
    }
  }
}

void StopSignals::watch_during_drain() {
  watcher_ = std::thread([this] {
    while (!stopping_.load()) {
      const int signal = read_signal(read_end_, 100);
      if (signal == SIGHUP) {
        spdlog::warn("received SIGHUP while draining: ignored (nothing is reloaded)");
      } else if (signal >= 0) {
        spdlog::warn(
            "received {} while draining: ignored; calls in flight keep their grace "
            "period, then the server exits 0",
            signal_name(signal));
      }
    }
  });
}

}  // namespace rpt::server
