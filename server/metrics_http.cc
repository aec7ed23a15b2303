#include "server/metrics_http.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>

#include <spdlog/spdlog.h>

namespace rpt::server {
namespace {

using Clock = std::chrono::steady_clock;

// A connection gets this long in all, however it trickles: one connection at a time is served,
// and a slow or silent client must not hold /healthz and /readyz (the kubelet's probes).
constexpr std::chrono::milliseconds kConnectionBudget{2000};

// Waits until `connection` is ready for `events` or `deadline` passes; true if ready.
bool wait_ready(int connection, short events, Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  if (left.count() <= 0) return false;
  pollfd ready{connection, events, 0};
  const int result = ::poll(&ready, 1, static_cast<int>(left.count()));
  if (result < 0 && errno == EINTR) return wait_ready(connection, events, deadline);
  return result > 0;
}

void send_all(int connection, const std::string& data, Clock::time_point deadline) {
  std::size_t sent = 0;
  while (sent < data.size() && wait_ready(connection, POLLOUT, deadline)) {
    const ssize_t n = ::send(connection, data.data() + sent, data.size() - sent,
                             MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n <= 0 && !(n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))) return;
    if (n > 0) sent += static_cast<std::size_t>(n);
  }
}

int bind_listener(const std::string& address, int* port) {
  const auto colon = address.rfind(':');
  if (colon == std::string::npos) throw std::runtime_error("metrics address wants HOST:PORT");
  std::string host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  const std::string service = address.substr(colon + 1);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &found) != 0 ||
      found == nullptr) {
    throw std::runtime_error("cannot resolve metrics address " + address);
  }
  const int fd = ::socket(found->ai_family, found->ai_socktype | SOCK_CLOEXEC, 0);
  const int yes = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  const bool bound = fd >= 0 && ::bind(fd, found->ai_addr, found->ai_addrlen) == 0 &&
                     ::listen(fd, 16) == 0;
  freeaddrinfo(found);
  if (!bound) {
    const std::string reason = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    throw std::runtime_error("cannot listen for metrics on " + address + ": " + reason);
  }
  sockaddr_storage local{};
  socklen_t length = sizeof(local);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &length);
  *port = ntohs(local.ss_family == AF_INET6
                    ? reinterpret_cast<sockaddr_in6*>(&local)->sin6_port
                    : reinterpret_cast<sockaddr_in*>(&local)->sin_port);
  return fd;
}

}  // namespace

MetricsHttpServer::MetricsHttpServer(const std::string& address,
                                     std::function<std::string()> render,
                                     std::function<bool()> ready)
    : render_(std::move(render)), ready_(std::move(ready)), listener_(bind_listener(address, &port_)) {
  thread_ = std::thread([this] { serve(); });
}

MetricsHttpServer::~MetricsHttpServer() {
  stopping_.store(true);
  if (thread_.joinable()) thread_.join();
  ::close(listener_);
}

void MetricsHttpServer::serve() {
  while (!stopping_.load()) {
    pollfd waiting{listener_, POLLIN, 0};
    if (::poll(&waiting, 1, 100) <= 0) continue;  // wakes up to notice stopping_
    const int connection = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (connection < 0) continue;
    try {
      answer(connection, Clock::now() + kConnectionBudget);
    } catch (const std::exception& error) {
      spdlog::warn("metrics endpoint: {}", error.what());
    }
    ::close(connection);
  }
}

void MetricsHttpServer::answer(int connection, Clock::time_point deadline) const {
  std::string request;
  char buffer[2048];
  while (request.find("\r\n\r\n") == std::string::npos && request.size() < 16384) {
    if (!wait_ready(connection, POLLIN, deadline)) return;
    const ssize_t n = ::recv(connection, buffer, sizeof(buffer), MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (n <= 0) return;
    request.append(buffer, static_cast<std::size_t>(n));
  }
  const auto is_get = [&request](const std::string& path) {
    return request.rfind("GET " + path + " ", 0) == 0 || request.rfind("GET " + path + "?", 0) == 0;
  };
  std::string status = "200 OK";
  std::string body;
  if (is_get("/metrics")) {
    body = render_();
  } else if (is_get("/healthz")) {
    body = "ok\n";
  } else if (is_get("/readyz")) {
    const bool ready = !ready_ || ready_();
    if (!ready) status = "503 Service Unavailable";
    body = ready ? "serving\n" : "not serving\n";
  } else {
    status = "404 Not Found";
    body = "not found: try /metrics, /healthz or /readyz\n";
  }
  const std::string head = "HTTP/1.1 " + status + "\r\n" +
                           "Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
                           "Content-Length: " + std::to_string(body.size()) +
                           "\r\nConnection: close\r\n\r\n";
  send_all(connection, head, deadline);
  send_all(connection, body, deadline);
}

}  // namespace rpt::server
