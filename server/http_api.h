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
//   GET  /              a translation page for people (server/web_ui.h); not with --no-web-ui
//   /admin/...          the admin API (server/admin_api.h), on the admin port only
//
// By default the JSON APIs share the metrics port: one HTTP stack, and probes that already prove
// this port's event loop answers. `--http-listen` moves them to a port of their own (HTTPS with
// --tls-cert/--tls-key, CORS with --cors-origins), so that exposing the APIs does not expose
// /metrics; the admin port then answers the probes and /metrics only. Errors are
// {"error": {"code": "<gRPC code name>", "message": "..."}} with the HTTP status of
// server/status.h; a body over the limit is 413, a full queue 429 with Retry-After.
//
// Thread safety: handle() is called from the HTTP server's threads concurrently.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "server/admin_api.h"
#include "server/call_record.h"
#include "server/deepl_api.h"
#include "server/http_server.h"

namespace rpt::server {

// What one port answers: rpt-server's admin port (--metrics-port) has the probes and /metrics,
// and the translation APIs too unless --http-listen gives them a port of their own.
struct HttpApiOptions {
  bool admin = true;        // /healthz, /readyz, /metrics
  bool public_apis = true;  // /v1/..., LibreTranslate's and DeepL's APIs
  // Origins whose browser pages may call the public APIs (CORS): exact origins
  // ("https://app.example"), or "*" for any; empty: no CORS headers, browsers refuse.
  std::vector<std::string> cors_origins;
  // With public_apis: GET / (and /index.html) answers the page for browsers (server/web_ui.h).
  bool web_ui = true;
};

class HttpApi {
 public:
  // `ready` answers /readyz.
  HttpApi(ServiceContext& service, std::function<bool()> ready, HttpApiOptions options = {})
      : service_(service),
        ready_(std::move(ready)),
        options_(std::move(options)),
        deepl_(std::make_unique<DeepLApi>(service)),
        admin_(options_.admin ? std::make_unique<AdminApi>(service) : nullptr) {}

  void handle(HttpRequest request, HttpResponder respond) const;
  // The admin API of an admin port (nullptr on others).
  AdminApi* admin() const { return admin_.get(); }

 private:
  // The public APIs' routes; false when the path is none of them.
  bool handle_public(HttpRequest& request, HttpResponder& respond) const;
  // CORS: the headers an allowed origin's request gets; true when it was a preflight (answered).
  bool cors(const HttpRequest& request, const HttpResponder& respond) const;

  ServiceContext& service_;
  std::function<bool()> ready_;
  HttpApiOptions options_;
  std::unique_ptr<DeepLApi> deepl_;  // its glossaries and usage change under const calls
  std::unique_ptr<AdminApi> admin_;  // on the admin port: /admin/... (server/admin_api.h)
};

}  // namespace rpt::server
