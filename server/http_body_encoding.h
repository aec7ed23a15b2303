// Request bodies sent compressed (Content-Encoding, RFC 9110 section 8.4): gzip and deflate are
// inflated with zlib before any handler reads the body, bounded as a plain body is.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace rpt::server {

struct DecodedBody {
  enum class Outcome {
    kDecoded,      // `body` holds the bytes as sent before compression
    kTooLarge,     // they are over the limit (nothing kept)
    kUnsupported,  // an encoding other than gzip, deflate or identity: HTTP 415
    kCorrupt,      // not a complete stream of the declared encoding: HTTP 400
  };
  Outcome outcome = Outcome::kDecoded;
  std::string body;
  std::string message;  // why, for the client, when not decoded
};

// `body` decoded per the Content-Encoding header `content_encoding` ("gzip", "x-gzip",
// "deflate", "identity", or empty; case aside; a list such as "gzip, identity" is applied
// right to left). At most `max_bytes` come out: a small body cannot expand past the limit a
// plain one has (a "zip bomb" stops there). Thread-safe; never throws but std::bad_alloc.
DecodedBody decode_body(std::string body, std::string_view content_encoding, std::size_t max_bytes);

}  // namespace rpt::server
