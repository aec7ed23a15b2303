// What the HTTP port answers (server/http_server.h carries it):
//
//   GET  /healthz       200 while the process answers (liveness)
//   GET  /readyz        200 while the server takes calls, 503 before and once it drains
//   GET  /metrics       Prometheus text exposition of the rpt_ metrics
//   GET  /v1/models     ListModels as JSON
//   POST /v1/translate  Translate as JSON (server/json_request.h), through the same routing,
//                       validation and scheduler as gRPC (server/translation_entry.h)
//   POST /translate, GET /languages, GET /frontend/settings
//                       LibreTranslate's API (server/libretranslate_api.h), the same path
//   /v2/translate, /v2/languages, /v2/usage, /v2/glossaries, ...
//                       DeepL's API (server/deepl_api.h), the same path
//
// The JSON API shares the metrics port rather than a port of its own: one HTTP stack, one more
// port to expose, and probes that already prove this port's event loop answers. Errors are
// {"error": {"code": "<gRPC code name>", "message": "..."}} with the HTTP status of
// server/status.h; a body over the limit is 413, a full queue 429 with Retry-After.
//
// Thread safety: handle() is called from the HTTP server's threads concurrently.
#pragma once

#include <functional>
#include <memory>

#include "server/call_record.h"
#include "server/deepl_api.h"
#include "server/http_server.h"

namespace rpt::server {

class HttpApi {
 public:
  // `ready` answers /readyz.
  HttpApi(ServiceContext& service, std::function<bool()> ready)
      : service_(service), ready_(std::move(ready)), deepl_(std::make_unique<DeepLApi>(service)) {}

  void handle(HttpRequest request, HttpResponder respond) const;

 private:
  ServiceContext& service_;
  std::function<bool()> ready_;
  std::unique_ptr<DeepLApi> deepl_;  // its glossaries and usage change under const calls
};

}  // namespace rpt::server
