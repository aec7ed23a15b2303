// The server's HTTP port, on GNU libmicrohttpd: probes (/healthz, /readyz), /metrics and the JSON
// API (server/http_api.h) all go through one HttpHandler. libmicrohttpd serves every connection
// from a small pool of event-loop threads (epoll where available) with a per-connection idle
// timeout and a connection limit, so many slow, silent or trickling clients cannot delay a probe.
//
// A handler answers through its HttpResponder, at once (probes, /metrics) or later from any
// thread (a translation, from the scheduler's thread): meanwhile the connection is suspended, so
// no pool thread waits for the translation.
//
// Thread safety: construction and destruction from one thread; the handler runs on the pool's
// threads and must be thread-safe; a responder may be called from any thread, exactly once.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

struct MHD_Daemon;

namespace rpt::server {

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string path;    // without the query string
  std::map<std::string, std::string> headers;  // names in lower case
  std::string body;
  bool body_too_large = false;  // the body passed HttpServerOptions::max_body_bytes (not kept)
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body = {};
  std::vector<std::pair<std::string, std::string>> headers = {};  // extra ones (Retry-After)
};

// Answers one request; call it exactly once.
using HttpResponder = std::function<void(HttpResponse)>;
using HttpHandler = std::function<void(HttpRequest, HttpResponder)>;

struct HttpServerOptions {
  std::string address;  // "HOST:PORT" ("[::1]:PORT" for IPv6); port 0: any free port
  int threads = 4;      // event-loop threads
  int max_connections = 1024;  // past it new connections are refused at once
  // An idle connection (no byte received or sent) is closed after this long. Suspended
  // connections (a translation running) do not time out.
  std::chrono::seconds idle_timeout{15};
  std::size_t max_body_bytes = 16 << 20;  // larger bodies set HttpRequest::body_too_large
};

class HttpServer {
 public:
  // Listens and serves; throws std::runtime_error when it cannot bind or start.
  HttpServer(const HttpServerOptions& options, HttpHandler handler);
  // Stops accepting, lets requests in progress take their answers (at most `drain_timeout`),
  // then closes every connection.
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  int port() const { return port_; }

  // Requests received and not yet fully answered (the drain waits for them).
  int requests_in_progress() const { return in_progress_.load(); }

 private:
  struct Dispatch;  // the libmicrohttpd callbacks

  HttpServerOptions options_;
  HttpHandler handler_;
  int port_ = 0;
  std::atomic<int> in_progress_{0};
  MHD_Daemon* daemon_ = nullptr;
};

}  // namespace rpt::server
