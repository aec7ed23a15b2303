#include "server/system_memory.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <vector>

namespace rpt::server {

std::optional<std::size_t> read_memory_limit(const std::string& path) {
  std::ifstream file(path);
  std::string value;
  if (!(file >> value) || value == "max") return std::nullopt;
  try {
    std::size_t used = 0;
    const unsigned long long bytes = std::stoull(value, &used);
    if (used != value.size() || bytes >= (1ULL << 62)) return std::nullopt;
    return static_cast<std::size_t>(bytes);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::size_t available_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  std::size_t available = pages > 0 && page_size > 0 ? static_cast<std::size_t>(pages) *
                                                           static_cast<std::size_t>(page_size)
                                                     : 0;
  // The root files (a container sees its own cgroup there) and this process's own group (a
  // systemd service on a host: "0::/system.slice/rpt.service" in /proc/self/cgroup, or v1's
  // "N:memory:/...").
  std::vector<std::string> paths = {"/sys/fs/cgroup/memory.max",
                                    "/sys/fs/cgroup/memory/memory.limit_in_bytes"};
  std::ifstream groups("/proc/self/cgroup");
  for (std::string line; std::getline(groups, line);) {
    if (line.rfind("0::/", 0) == 0 && line.size() > 4) {
      paths.push_back("/sys/fs/cgroup" + line.substr(3) + "/memory.max");
    }
    const auto memory = line.find(":memory:/");  // cgroup v1's memory controller
    if (memory != std::string::npos && line.size() > memory + 9) {
      paths.push_back("/sys/fs/cgroup/memory" + line.substr(memory + 8) + "/memory.limit_in_bytes");
    }
  }
  for (const std::string& path : paths) {
    if (const auto limit = read_memory_limit(path)) {
      available = available == 0 ? *limit : std::min(available, *limit);
    }
  }
  return available;
}

}  // namespace rpt::server
