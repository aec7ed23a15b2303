// rpt-loadgen's calls over the HTTP JSON API: POST /v1/translate on the server's HTTP port (README,
// "The HTTP port"), the body mirroring TranslateRequest. libcurl's multi interface: one driver
// thread runs every call in flight (hundreds, in an open loop, without a thread each), over
// kept-alive connections it reuses; start() hands calls to it through a queue and wakes it.
// Each call's deadline is its curl timeout and, as X-Request-Timeout, the server's deadline too
// (as gRPC sends its deadline along). Answers map to gRPC code names in client/http_outcome.h; a
// curl timeout is DEADLINE_EXCEEDED, any other transport failure (no connection) UNAVAILABLE.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "client/caller.h"
#include "client/curl_handles.h"

namespace rpt::client {

struct HttpCall;  // one call: its curl handle, request and answer (http_caller.cc)

// The URL of POST /v1/translate on `server`: HOST:PORT or http://HOST:PORT (a trailing slash
// allowed). nullopt for anything else (https://, a path).
std::optional<std::string> http_translate_url(const std::string& server);

class HttpCaller final : public Caller {
 public:
  // `url`: from http_translate_url. Starts the driver thread.
  HttpCaller(std::string url, TranslateSettings settings);
  // Stops the driver; calls still in flight end without an outcome.
  ~HttpCaller() override;
  HttpCaller(const HttpCaller&) = delete;
  HttpCaller& operator=(const HttpCaller&) = delete;

  void start(std::vector<std::string> texts, Clock::time_point deadline, Done done) override;

 private:
  void drive();  // the driver thread's loop

  CurlGlobal global_;
  std::string url_;
  TranslateSettings settings_;
  CurlMulti multi_;   // the driver thread's alone, but for curl_multi_wakeup
  std::mutex mutex_;  // guards queued_ and stopping_
  std::vector<std::unique_ptr<HttpCall>> queued_;
  bool stopping_ = false;
  std::thread driver_;  // last: starts once the rest is ready
};

}  // namespace rpt::client
