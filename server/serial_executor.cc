#include "server/serial_executor.h"

#include <spdlog/spdlog.h>

#include <exception>
#include <utility>

namespace rpt::server {
namespace {

void run_logged(const std::string& name, const std::function<void()>& task) {
  try {
    task();
  } catch (const std::exception& error) {
    spdlog::error("{}: a task failed: {}", name, error.what());
  } catch (...) {
    spdlog::error("{}: a task failed", name);
  }
}

}  // namespace

SerialExecutor::SerialExecutor(std::string name)
    : name_(std::move(name)), thread_([this] { run(); }) {}

SerialExecutor::~SerialExecutor() { close(); }

void SerialExecutor::post(std::function<void()> task) {
  {
    std::lock_guard lock(mutex_);
    if (!closing_) {
      tasks_.push_back(std::move(task));
      wake_.notify_one();
      return;
    }
  }
  run_logged(name_, task);
}

void SerialExecutor::close() {
  {
    std::lock_guard lock(mutex_);
    closing_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

void SerialExecutor::run() {
  while (true) {
    std::function<void()> task;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return closing_ || !tasks_.empty(); });
      if (tasks_.empty()) return;  // closing, and everything has run
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    run_logged(name_, task);
  }
}

}  // namespace rpt::server
