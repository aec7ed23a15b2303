// SIGTERM/SIGINT for rpt-server, taken so that the process never dies by a signal's default
// action: the first signal starts the drain; later ones, while the drain's grace period runs, are
// logged and ignored (in-flight calls keep their grace period and the exit code stays 0).
// SIGHUP, taken the same way, asks for a reload (of --api-keys) while serving; during the drain it
// is logged and ignored too.
//
// Why a handler and not only a blocked mask with sigwait: libraries start threads before main
// (OpenBLAS's pool) with the stop signals unblocked, and the kernel may deliver a process-wide
// signal to any of them; with nobody in sigwait (during the drain) that thread takes the default
// action and the process dies. A handler runs in whichever thread gets the signal; it only
// writes the signal number into a pipe (async-signal-safe), read here as ordinary code.
// SIGPIPE is ignored as well (a client closing its socket must not end the server).
//
// Thread safety: one instance per process; wait() and watch_during_drain() from one thread.
#pragma once

#include <atomic>
#include <functional>
#include <thread>

namespace rpt::server {

class StopSignals {
 public:
  // Installs the handlers. Throws std::runtime_error when the pipe cannot be made.
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // Blocks until SIGTERM or SIGINT arrives (or has arrived since construction); returns it. Each
  // SIGHUP before it runs `on_hangup` (when given) in this thread, and the wait goes on.
  int wait(const std::function<void()>& on_hangup = {});
  // From now until destruction, logs each further stop signal as ignored.
  void watch_during_drain();

 private:
  int read_end_ = -1;
  std::atomic<bool> stopping_{false};
  std::thread watcher_;
};

// "SIGTERM", "SIGINT", "SIGHUP" or "a stop signal".
const char* signal_name(int signal);

}  // namespace rpt::server
