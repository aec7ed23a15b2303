// The memory this process may use, for the CPU engine's default decoding-state limit: without
// one, a request within every other limit (many beams, a long forced max_length) could grow
// caches until the kernel's OOM killer ends the server and every call in flight with it.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace rpt::server {

// The value of a cgroup memory limit file (cgroup v2 memory.max, v1 memory.limit_in_bytes);
// nullopt for "max", a missing or unreadable file, or v1's "no limit" (a value near 2^63).
std::optional<std::size_t> read_memory_limit(const std::string& path);

// The smaller of the machine's physical memory and this process's cgroup limit (a container's
// memory limit under Kubernetes), in bytes.
std::size_t available_memory_bytes();

}  // namespace rpt::server
