// LibreTranslate's API, what Mastodon, Weblate, Discourse, Nextcloud, browser extensions and
// libretranslatepy call, over the same shared path as rpt's own API (docs/compatible-apis.md):
//
//   POST /translate           q (a text or an array), source (a code or "auto"), target,
//                             format (text|html), alternatives, api_key; JSON or a form
//   POST /detect              q (a text or an array), api_key: [{"confidence", "language"}],
//                             best first, among the served source languages
//   GET  /languages           [{"code", "name", "targets"}] from the served models' pairs
//   GET  /frontend/settings   what LibreTranslate's clients read at start
//
// Answers and errors in LibreTranslate's shapes: {"translatedText": ..., "alternatives": [...],
// "detectedLanguage": {...}}, {"error": "..."} with 400, 429 (Retry-After), 500, 503. JSON, form
// and multipart bodies.
// source "auto" picks the one served model translating into `target`; with several, the language
// detected on the call's texts (server/language_detection.h) among their sources: one for the
// whole call, with its confidence in detectedLanguage.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "server/call_record.h"
#include "server/http_translate_call.h"

namespace rpt::server {

// A LibreTranslate request, read from a JSON, form or multipart body.
struct LibreTranslateRequest {
  std::vector<std::string> q;
  bool q_is_list = false;
  std::string source;
  std::string target;
  std::string format = "text";
  int alternatives = 0;
  std::string api_key;
};

// The request's fields (its decoder; INVALID_ARGUMENT for a body that is not one).
RequestStatus read_libretranslate_request(const HttpRequest& request, LibreTranslateRequest* out);

// Whether q counts as missing, as LibreTranslate tests it (`not q`): absent, null, an empty
// array or an empty text; an array holding empty texts is not (each comes back empty).
bool lacks_q(const LibreTranslateRequest& request);

std::unique_ptr<HttpTranslateDialect> libretranslate_dialect(ServiceContext& service);
// A refusal in LibreTranslate's shape, {"error": "..."}, for every status (400 for an unserved
// language and 403 for a missing key, as LibreTranslate answers; Retry-After when refused for
// load).
HttpResponse libretranslate_error(const RequestStatus& status);
HttpResponse libretranslate_detect(ServiceContext& service, const HttpRequest& request);
HttpResponse libretranslate_languages(ServiceContext& service);
HttpResponse libretranslate_settings(ServiceContext& service);

}  // namespace rpt::server
