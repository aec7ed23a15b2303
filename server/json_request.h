// The JSON body of POST /v1/translate decoded into the gRPC request it mirrors
// (proto/translate.proto), so both protocols share one validation path afterwards:
//
//   {"model": "en-de", "source_language": "en", "target_language": "de",
//    "texts": ["Save the file."], "options": {"beam_size": 4, "return_scores": true},
//    "timeout": 2.5}
//
// `options` follows the proto3 JSON mapping of DecodingOptions (snake_case or lowerCamelCase
// names, enum names or numbers); `timeout` is the call's deadline in seconds. Unknown fields,
// wrong types and fields given twice are refused, naming the field.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "proto/translate.pb.h"
#include "server/selector_fields.h"
#include "server/status.h"

namespace rpt::server {

// Objects and arrays nest at most this deep in a body (a request needs 2: the body and its
// options); deeper bodies are refused as they are parsed, before anything recurses over them.
inline constexpr int kMaxJsonDepth = 32;

struct JsonTranslateRequest {
  v1::TranslateRequest request;
  std::optional<double> timeout_seconds;        // > 0 when set
  std::string api_key;                          // as the dialect reads it (--api-keys); empty: none
  SelectorFields fields = kJsonSelectorFields;  // how the dialect names the model selector
};

// `body` as JSON, nesting bounded by kMaxJsonDepth as it is parsed; INVALID_ARGUMENT naming what
// is wrong (not JSON, too deep, a field an object gives twice: "options.beam_size is given
// twice ..."). For every JSON body the server reads.
RequestStatus parse_json_body(std::string_view body, nlohmann::json* parsed);

// INVALID_ARGUMENT with the reason (invalid JSON, nesting past kMaxJsonDepth, a field given
// twice, a field of the wrong type, an unknown field).
RequestStatus parse_translate_json(std::string_view body, JsonTranslateRequest* parsed);

// {"error": {"code": "NOT_FOUND", "message": "..."}}
std::string json_error(const RequestStatus& status);

// The proto3 JSON mapping of `message` with the .proto's field names (source_tokens, ...);
// every field printed, unset ones with their default. nullopt when protobuf cannot print it.
std::optional<std::string> to_json(const google::protobuf::Message& message);

}  // namespace rpt::server
