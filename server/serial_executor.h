// One thread that runs tasks in the order they were posted: the scheduler hands finished
// sentences to their calls through it (making the result text, restoring spans, serialising and
// sending the response), so its own thread goes on decoding (server/scheduler.h).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace rpt::server {

class SerialExecutor {
 public:
  // `name` is for the log line of a task that throws.
  explicit SerialExecutor(std::string name);
  ~SerialExecutor();  // close()
  SerialExecutor(const SerialExecutor&) = delete;
  SerialExecutor& operator=(const SerialExecutor&) = delete;

  // Queues `task`; it runs after every task posted before it. A task that throws is logged and
  // the next one runs. After close(), runs `task` on the caller's thread (nothing is dropped).
  void post(std::function<void()> task);
  // Runs everything queued, then ends the thread. Idempotent.
  void close();

 private:
  void run();

  const std::string name_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> tasks_;  // guarded by mutex_
  bool closing_ = false;                     // guarded by mutex_
  std::thread thread_;                       // last: starts after the members above exist
};

}  // namespace rpt::server
