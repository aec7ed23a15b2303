// The server's HTTP port, on GNU libmicrohttpd: probes (/healthz, /readyz), /metrics and the JSON
// API (server/http_api.h) all go through one HttpHandler. libmicrohttpd serves every connection
// from a small pool of event-loop threads (epoll where available) with a per-connection idle
// timeout and a connection limit, so many slow, silent or trickling clients cannot delay a probe.
//
// A handler answers through its HttpResponder, at once (probes, /metrics) or later from any
// thread (a translation, from the scheduler's thread): meanwhile the connection is suspended, so
// no pool thread waits for the translation. libmicrohttpd does not look at a suspended
// connection's socket, so a watcher thread polls those sockets and tells the handler (through
// HttpResponder::on_client_gone) when a client hangs up before its answer.
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

// One part of a multipart/form-data body (a form field, or an uploaded file).
struct HttpFormPart {
  std::string name;
  std::string filename;      // empty for a plain field
  std::string content_type;  // the part's own, if it says
  std::string data;
};

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string path;    // without the query string
  // The query string's arguments, decoded, in order (a name may repeat).
  std::vector<std::pair<std::string, std::string>> query;
  std::map<std::string, std::string> headers;  // names in lower case
  std::string body;
  // A multipart/form-data body, parsed by libmicrohttpd's post processor (`body` keeps the raw
  // bytes); empty for other bodies.
  std::vector<HttpFormPart> parts;
  bool body_too_large = false;  // the body passed HttpServerOptions::max_body_bytes (not kept)
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body = {};
  std::vector<std::pair<std::string, std::string>> headers = {};  // extra ones (Retry-After)
};

struct HttpRequestState;  // one request's bookkeeping (http_server.cc)
class HttpServer;

// Answers one request. Copyable; the copies share the request.
class HttpResponder {
 public:
  // Answers; call exactly once (any thread).
  void operator()(HttpResponse answer) const;
  // A header every answer to this request carries, whoever gives it (CORS); before answering.
  void add_header(std::string name, std::string value) const;
  // For an answer that comes after the handler returns: `client_gone` runs at most once, on the
  // server's watcher thread, if the client closes the connection (or its sending side, as nginx
  // counts a client that closed the request) before the answer. It should stop the work; the
  // answer must still be given, and is dropped. Register it before the work can finish; never
  // called once the answer is given.
  void on_client_gone(std::function<void()> client_gone) const;

 private:
  friend class HttpServer;
  HttpResponder(HttpServer* server, std::shared_ptr<HttpRequestState> state)
      : server_(server), state_(std::move(state)) {}
  HttpServer* server_;
  std::shared_ptr<HttpRequestState> state_;
};

using HttpHandler = std::function<void(HttpRequest, HttpResponder)>;

struct HttpServerOptions {
  std::string address;         // "HOST:PORT" ("[::1]:PORT" for IPv6); port 0: any free port
  int threads = 4;             // event-loop threads
  int max_connections = 1024;  // past it new connections are refused at once
  // An idle connection (no byte received or sent) is closed after this long. Suspended
  // connections (a translation running) do not time out.
  std::chrono::seconds idle_timeout{15};
  std::size_t max_body_bytes = 16 << 20;  // larger bodies set HttpRequest::body_too_large
  // Each event-loop thread's stack, set rather than inherited (containers vary `ulimit -s`):
  // the handler parses bodies (at most 32 levels deep), validates and tokenizes texts on it, a
  // few hundred KiB at most.
  std::size_t thread_stack_bytes = 8 << 20;
  // HTTPS (libmicrohttpd over GnuTLS) with this PEM certificate chain and private key; both
  // empty: plain HTTP.
  std::string tls_cert_pem = {};
  std::string tls_key_pem = {};
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
  friend class HttpResponder;
  struct Dispatch;      // the libmicrohttpd callbacks
  class HangupWatcher;  // polls the sockets of suspended connections

  HttpServerOptions options_;
  HttpHandler handler_;
  int port_ = 0;
  std::atomic<int> in_progress_{0};
  std::unique_ptr<HangupWatcher> watcher_;
  MHD_Daemon* daemon_ = nullptr;
};

}  // namespace rpt::server
