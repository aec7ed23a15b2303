// The admin API, on the --metrics-port only (never the --http-listen port): models and named
// glossaries changed while the server runs. Every call presents the admin key
// (`Authorization: Bearer KEY`, --admin-key-file): 401 without a key, 403 with another one or
// when the server has none. Changes run one at a time on a thread of their own, and the answer
// comes once done: a load is answered when the model is loaded, warmed and serving.
//
//   GET    /admin/models             the models served: name, directory, pairs, glossaries
//   POST   /admin/models             {"name", "directory"[, "compute_type"]}: load
//   PUT    /admin/models/NAME        {"directory"[, "compute_type"]}: replace (calls in flight
//                                    finish on the old weights, new calls go to the new ones)
//   DELETE /admin/models/NAME        unload, once its calls in flight have finished
//   GET    /admin/glossaries         every model's named glossaries
//   PUT    /admin/glossaries/NAME    {"entries": [["source", "target"], ...][, "model": M]}:
//                                    create or replace (kept in --glossary-dir)
//   DELETE /admin/glossaries/NAME    [?model=M]
//
// Errors are rpt's JSON errors with the HTTP status of server/status.h.
#pragma once

#include <mutex>
#include <optional>
#include <string>

#include "server/api_keys.h"
#include "server/call_record.h"
#include "server/http_server.h"
#include "server/serial_executor.h"

namespace rpt::server {

class AdminApi {
 public:
  explicit AdminApi(ServiceContext& service) : service_(service) {}

  // Reads the key (the file's first line, at least 16 characters); throws std::runtime_error
  // naming the file. Called again on SIGHUP; a failed reload keeps the key served.
  void load_key(const std::string& path);

  // True when `request` is on an /admin path (then answered, now or once its change is done).
  bool handle(const HttpRequest& request, const HttpResponder& respond);

 private:
  // The presented key's verdict: nullopt when it is the admin key, else the refusal.
  std::optional<RequestStatus> refuse(const HttpRequest& request) const;
  // Runs `change` on worker_, counted in flight (the drain waits for it), and answers.
  void run_change(const HttpResponder& respond, std::function<HttpResponse()> change);

  ServiceContext& service_;
  mutable std::mutex key_mutex_;
  std::optional<KeyDigest> key_;  // guarded by key_mutex_
  SerialExecutor worker_{"admin"};
};

}  // namespace rpt::server
