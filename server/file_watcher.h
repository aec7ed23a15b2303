// Polls files for changed contents (--watch-files): Kubernetes updates a mounted Secret or
// ConfigMap by swapping a symlink and sends no signal, so the server looks itself. Every
// `interval` the files are read and hashed; when any differs from the last look, `changed` runs
// (on the watcher's thread). A file that cannot be read counts as empty.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "server/api_keys.h"

namespace rpt::server {

class FileWatcher {
 public:
  FileWatcher(std::vector<std::string> paths, std::chrono::milliseconds interval,
              std::function<void()> changed);
  ~FileWatcher();  // stops and joins
  FileWatcher(const FileWatcher&) = delete;
  FileWatcher& operator=(const FileWatcher&) = delete;

 private:
  std::vector<KeyDigest> fingerprints() const;  // SHA-256 of each file
  void run();

  const std::vector<std::string> paths_;
  const std::chrono::milliseconds interval_;
  const std::function<void()> changed_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;  // guarded by mutex_
  std::thread thread_;     // last: starts after the members above exist
};

}  // namespace rpt::server
