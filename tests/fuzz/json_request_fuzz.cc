// libFuzzer target: a POST /v1/translate body through the JSON decoder and the request
// validation it shares with gRPC (tokenizing included). Must never crash or throw.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_model.h"
#include "server/json_request.h"
#include "server/request_validation.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rpt;
  server::JsonTranslateRequest parsed;
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  if (!server::parse_translate_json(body, &parsed).ok()) return 0;
  const server::ServerOptions& options = fuzz::fuzz_options();
  server::PreparedRequest prepared;
  server::prepare_request(parsed.request, fuzz::fuzz_model(), {}, options, &prepared);
  server::json_error({server::StatusCode::kInvalidArgument, std::string(body.substr(0, 64))});
  return 0;
}
