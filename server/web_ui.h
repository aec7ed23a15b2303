// The translation page for people: GET / (and /index.html) on every port that serves the public
// APIs, unless --no-web-ui (docs/compatible-apis.md, "A page for browsers"). One file,
// server/web_ui/index.html, embedded in the binary at build time (server/web_ui/embed.cmake); it
// calls the same origin's GET v1/models and POST v1/translate, so it works on --metrics-port and
// on --http-listen alike.
//
// Served with a strict Content-Security-Policy: nothing loads from anywhere, the page's one inline
// <style> and one inline <script> run because the policy names their SHA-256 (computed when the
// page is embedded), fetches go to the same origin only, and no other site may frame it.
//
// Thread safety: everything here is immutable after its first use; callable from any thread.
#pragma once

#include <string>
#include <string_view>

#include "server/http_server.h"

namespace rpt::server {

// The page's bytes (UTF-8 HTML).
std::string_view web_ui_page();

// The Content-Security-Policy header the page is served with.
const std::string& web_ui_content_security_policy();

// True for the paths the page answers: "/" and "/index.html".
bool is_web_ui_path(std::string_view path);

// The answer to GET (or HEAD) of the page: 200, text/html, Cache-Control: no-cache (a new binary's
// page is fetched again, with its new hashes), the policy, X-Content-Type-Options: nosniff.
HttpResponse web_ui_response();

}  // namespace rpt::server
