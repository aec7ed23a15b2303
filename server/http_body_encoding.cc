#include "server/http_body_encoding.h"

#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <utility>
#include <vector>

namespace rpt::server {
namespace {

std::string lower_trimmed(std::string_view text) {
  const std::size_t first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  const std::size_t last = text.find_last_not_of(" \t");
  std::string out(text.substr(first, last - first + 1));
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// A zlib inflate stream, ended on every path.
class Inflater {
 public:
  explicit Inflater(int window_bits) { ok_ = inflateInit2(&stream_, window_bits) == Z_OK; }
  ~Inflater() {
    if (ok_) inflateEnd(&stream_);
  }
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;

  // Inflates every member of `in` (gzip allows several, one after another) into `out`, at most
  // `max_bytes` of it.
  DecodedBody::Outcome run(std::string_view in, std::size_t max_bytes, std::string* out) {
    if (!ok_) return DecodedBody::Outcome::kCorrupt;
    stream_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    stream_.avail_in = static_cast<uInt>(in.size());
    char chunk[16384];
    for (;;) {
      stream_.next_out = reinterpret_cast<Bytef*>(chunk);
      stream_.avail_out = sizeof(chunk);
      const int status = inflate(&stream_, Z_NO_FLUSH);
      const std::size_t produced = sizeof(chunk) - stream_.avail_out;
      if (out->size() + produced > max_bytes) return DecodedBody::Outcome::kTooLarge;
      out->append(chunk, produced);
      if (status == Z_STREAM_END) {
        if (stream_.avail_in == 0) return DecodedBody::Outcome::kDecoded;
        if (inflateReset(&stream_) != Z_OK) return DecodedBody::Outcome::kCorrupt;
        continue;
      }
      if (status != Z_OK) return DecodedBody::Outcome::kCorrupt;  // data or buffer error
      if (stream_.avail_in == 0 && produced == 0) return DecodedBody::Outcome::kCorrupt;
    }
  }

 private:
  z_stream stream_{};
  bool ok_ = false;
};

}  // namespace

DecodedBody decode_body(std::string body, std::string_view content_encoding,
                        std::size_t max_bytes) {
  DecodedBody decoded;
  std::vector<std::string> codings;
  for (std::size_t begin = 0; begin <= content_encoding.size();) {
    std::size_t comma = content_encoding.find(',', begin);
    if (comma == std::string_view::npos) comma = content_encoding.size();
    std::string coding = lower_trimmed(content_encoding.substr(begin, comma - begin));
    if (!coding.empty() && coding != "identity") codings.push_back(std::move(coding));
    begin = comma + 1;
  }
  for (auto coding = codings.rbegin(); coding != codings.rend(); ++coding) {
    int window_bits = 0;
    if (*coding == "gzip" || *coding == "x-gzip") {
      window_bits = 15 + 16;  // a gzip header and trailer
    } else if (*coding == "deflate") {
      window_bits = 15 + 32;  // HTTP's deflate is zlib's format; a gzip header is read too
    } else {
      decoded.outcome = DecodedBody::Outcome::kUnsupported;
      decoded.message = "Content-Encoding " + *coding +
                        " is not supported: send the body as it is, or gzip or deflate";
      return decoded;
    }
    std::string inflated;
    decoded.outcome = Inflater(window_bits).run(body, max_bytes, &inflated);
    if (decoded.outcome == DecodedBody::Outcome::kTooLarge) {
      decoded.message =
          "the body is over the limit of " + std::to_string(max_bytes) + " bytes once decompressed";
      return decoded;
    }
    if (decoded.outcome == DecodedBody::Outcome::kCorrupt) {
      decoded.message = "the body is not valid " + *coding + " data (Content-Encoding)";
      return decoded;
    }
    body = std::move(inflated);
  }
  decoded.body = std::move(body);
  return decoded;
}

}  // namespace rpt::server
