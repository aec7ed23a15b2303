// rpt-server assembled: models and their schedulers, the gRPC server (Translator, Health,
// reflection), the HTTP port (probes, /metrics, JSON API), the API keys (reloaded on SIGHUP), and
// the drain on SIGTERM/SIGINT (docs/server.md): health turns NOT_SERVING (and HTTP /readyz 503),
// new calls of either protocol get UNAVAILABLE, calls in flight get the grace period to finish,
// then the server stops.
#pragma once

#include <atomic>
#include <memory>

#include <grpcpp/server.h>

#include "server/call_record.h"
#include "server/health_service.h"
#include "server/http_api.h"
#include "server/http_server.h"
#include "server/metrics.h"
#include "server/file_watcher.h"
#include "server/model_registry.h"
#include "server/server_options.h"
#include "server/translator_service.h"

namespace rpt::server {

class Server {
 public:
  // Loads the models and starts listening. Throws (rpt::ModelError, std::runtime_error) when a
  // model does not load or an address cannot be bound.
  explicit Server(const ServerOptions& options);
  ~Server();

  // Serves until `wait_for_stop` returns (the signal wait), then drains and stops.
  template <typename WaitForStop>
  void serve(WaitForStop&& wait_for_stop) {
    wait_for_stop();
    drain_and_stop();
  }

  // Rereads --api-keys, --admin-key-file and the --glossary files (SIGHUP, --watch-files) and
  // logs what changed; a bad file keeps what it held served.
  void reload_files();

  int grpc_port() const { return grpc_port_; }
  int metrics_port() const { return http_->port(); }

 private:
  void drain_and_stop();
  void write_ready_file() const;
  void warn_of_unserved_models() const;
  void reload_api_keys();
  void reload_glossaries();

  const ServerOptions& options_;
  // True from when gRPC serves until the drain; /readyz reads it from the HTTP threads.
  std::atomic<bool> serving_{false};
  Metrics metrics_;
  ModelRegistry registry_;
  ApiKeys api_keys_;  // before context_, which refers to it; loaded, and reloaded on SIGHUP
  ServiceContext context_;
  TranslatorService service_;
  HealthService health_;  // outlives server_: gRPC finishes its streams first
  std::unique_ptr<grpc::Server> server_;
  int grpc_port_ = 0;
  HttpApi http_api_;    // the metrics port: probes, /metrics (and the APIs without --http-listen)
  HttpApi public_api_;  // the --http-listen port: the translation APIs
  // Last: destroyed first, after every call has its answer (the destructor stops the models).
  std::unique_ptr<HttpServer> http_;
  std::unique_ptr<HttpServer> public_http_;    // null without --http-listen
  std::mutex reload_mutex_;                    // SIGHUP and --watch-files reload one at a time
  std::unique_ptr<FileWatcher> file_watcher_;  // with --watch-files; stopped first
};

}  // namespace rpt::server
