#include "server/file_watcher.h"

#include <fstream>
#include <sstream>

namespace rpt::server {

FileWatcher::FileWatcher(std::vector<std::string> paths, std::chrono::milliseconds interval,
                         std::function<void()> changed)
    : paths_(std::move(paths)),
      interval_(interval),
      changed_(std::move(changed)),
      thread_([this] { run(); }) {}

FileWatcher::~FileWatcher() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

std::vector<KeyDigest> FileWatcher::fingerprints() const {
  std::vector<KeyDigest> out;
  for (const std::string& path : paths_) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    if (in) text << in.rdbuf();
    out.push_back(key_digest(text.str()));  // a digest: the contents (keys) are not kept
  }
  return out;
}

void FileWatcher::run() {
  std::vector<KeyDigest> last = fingerprints();
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, interval_, [this] { return stopping_; })) {
    lock.unlock();
    std::vector<KeyDigest> now = fingerprints();
    if (now != last) {
      last = std::move(now);
      changed_();
    }
    lock.lock();
  }
}

}  // namespace rpt::server
