#include "server/web_ui.h"

#include <cstddef>

namespace rpt::server {
namespace web_ui_data {

// Defined in the source that server/web_ui/embed.cmake generates in the build directory.
extern const unsigned char kPage[];
extern const std::size_t kPageSize;
extern const char kStyleSha256[];   // hex
extern const char kScriptSha256[];  // hex

}  // namespace web_ui_data
namespace {

// A CSP hash source ('sha256-<base64>') from a digest in hex.
std::string csp_hash(std::string_view hex) {
  static constexpr char kBase64[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  auto nibble = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
  std::string bytes;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    bytes.push_back(static_cast<char>(nibble(hex[i]) * 16 + nibble(hex[i + 1])));
  }
  std::string encoded;
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::size_t left = bytes.size() - i;
    unsigned value = static_cast<unsigned char>(bytes[i]) << 16;
    if (left > 1) value |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    if (left > 2) value |= static_cast<unsigned char>(bytes[i + 2]);
    encoded.push_back(kBase64[(value >> 18) & 63]);
    encoded.push_back(kBase64[(value >> 12) & 63]);
    encoded.push_back(left > 1 ? kBase64[(value >> 6) & 63] : '=');
    encoded.push_back(left > 2 ? kBase64[value & 63] : '=');
  }
  return "'sha256-" + encoded + "'";
}

}  // namespace

std::string_view web_ui_page() {
  return {reinterpret_cast<const char*>(web_ui_data::kPage), web_ui_data::kPageSize};
}

const std::string& web_ui_content_security_policy() {
  static const std::string policy =
      "default-src 'none'; script-src " + csp_hash(web_ui_data::kScriptSha256) + "; style-src " +
      csp_hash(web_ui_data::kStyleSha256) +
      "; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
  return policy;
}

bool is_web_ui_path(std::string_view path) { return path == "/" || path == "/index.html"; }

HttpResponse web_ui_response() {
  return {.status = 200,
          .content_type = "text/html; charset=utf-8",
          .body = std::string(web_ui_page()),
          .headers = {{"Content-Security-Policy", web_ui_content_security_policy()},
                      {"Cache-Control", "no-cache"},
                      {"X-Content-Type-Options", "nosniff"},
                      {"X-Frame-Options", "DENY"},
                      {"Referrer-Policy", "no-referrer"}}};
}

}  // namespace rpt::server
