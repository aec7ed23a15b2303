// Checks a TranslateRequest against the server's limits and turns it into what the scheduler
// needs. Every refusal is INVALID_ARGUMENT with a message naming the text or option and the limit.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "engine/beam_search.h"
#include "engine/span_protection.h"
#include "proto/translate.pb.h"
#include "server/model_registry.h"
#include "server/server_options.h"
#include "server/status.h"

namespace rpt::server {

struct PreparedRequest {
  std::vector<std::vector<int>> source_ids;  // one non-empty id list per text
  // Per text, what span protection did (nullptr: no span); empty with protection off.
  std::vector<std::shared_ptr<const ProtectedSource>> spans;
  DecodingOptions options;                   // defaults filled in, validated
  bool return_scores = false;
  bool return_tokens = false;
  bool use_cache = true;  // DecodingOptions.use_cache (unset: true)
};

// The decoding options of `request` with the server's defaults for unset fields, checked
// against `limits` and the model.
RequestStatus resolve_options(const v1::DecodingOptions& request, const DecodingOptions& defaults,
                              const RequestLimits& limits, const Model& model,
                              DecodingOptions* resolved);

// Validates and tokenizes `request` for `model`.
RequestStatus prepare_request(const v1::TranslateRequest& request, const ServedModel& model,
                              const RequestLimits& limits, const DecodingOptions& defaults,
                              PreparedRequest* prepared);

}  // namespace rpt::server
