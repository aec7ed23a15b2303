// A minimal HTTP/1.1 endpoint for Prometheus scrapes and HTTP probes: GET /metrics answers the
// text exposition format, GET /healthz 200 while the process answers, GET /readyz 200 while the
// server takes calls and 503 before it does and once it drains (the HTTP twins of grpc.health.v1, for probes that
// cannot speak TLS to a --tls-cert server); anything else 404. One thread, one connection at a
// time (scrapes and probes are rare and small), each with 2 s in all to send its request and
// take the answer, so a client that trickles bytes cannot hold the probes.
//
// Plain HTTP by design, also when gRPC serves TLS (--tls-cert/--tls-key): it carries counters and
// model names, no request text, and Prometheus scrapes it in-cluster. It listens on the --listen
// host, so with --listen 0.0.0.0 keep its port off untrusted networks (firewall, NetworkPolicy).
//
// Why not prometheus-cpp's Exposer: Debian builds its civetweb with 100 KB worker stacks, and
// in a process that loads OpenBLAS (whose libquadmath registers printf hooks, sending every printf
// down glibc's stack-hungry positional path) the first scrape overflows that stack and crashes.
//
// Thread safety: construction and destruction from one thread; `render` is called from the
// server's thread and must be thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>

namespace rpt::server {

class MetricsHttpServer {
 public:
  // Listens on `address` ("HOST:PORT", port 0: any free port); throws std::runtime_error when it
  // cannot bind. `ready` answers /readyz (thread-safe; null: always ready).
  MetricsHttpServer(const std::string& address, std::function<std::string()> render,
                    std::function<bool()> ready = nullptr);
  ~MetricsHttpServer();
  MetricsHttpServer(const MetricsHttpServer&) = delete;
  MetricsHttpServer& operator=(const MetricsHttpServer&) = delete;

  int port() const { return port_; }

 private:
  void serve();
  // Reads one request and answers it, all before `deadline`.
  void answer(int connection, std::chrono::steady_clock::time_point deadline) const;

  std::function<std::string()> render_;
  std::function<bool()> ready_;
  int port_ = 0;  // before listener_: bind_listener() sets it
  int listener_ = -1;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace rpt::server
