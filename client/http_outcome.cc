#include "client/http_outcome.h"

#include <nlohmann/json.hpp>

namespace rpt::client {

std::string_view code_of_http_status(long http_status) {
  switch (http_status) {
    case 200:
      return "OK";
    case 400:
    case 405:  // wrong method
    case 413:  // body over --http-max-body-bytes
      return "INVALID_ARGUMENT";
    case 401:
      return "UNAUTHENTICATED";
    case 403:
      return "PERMISSION_DENIED";
    case 404:
      return "NOT_FOUND";
    case 429:
      return "RESOURCE_EXHAUSTED";
    case 499:
      return "CANCELLED";
    case 500:
      return "INTERNAL";
    case 502:
    case 503:
      return "UNAVAILABLE";
    case 504:
      return "DEADLINE_EXCEEDED";
    default:
      return "UNKNOWN";
  }
}

CallOutcome outcome_of_http_answer(long http_status, const std::string& body) {
  CallOutcome outcome;
  outcome.code = code_of_http_status(http_status);
  if (!outcome.ok()) return outcome;
  try {
    // The proto3 JSON mapping of TranslateResponse; target_tokens (uint32) is a number there.
    const nlohmann::json response = nlohmann::json::parse(body);
    for (const auto& translation : response.at("translations")) {
      outcome.target_tokens += translation.at("target_tokens").get<long>();
      ++outcome.sentences;
    }
  } catch (const nlohmann::json::exception&) {
    return CallOutcome{.code = "INTERNAL"};
  }
  return outcome;
}

}  // namespace rpt::client
