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
  // Per text, what span protection and the glossary did (nullptr: nothing to keep); empty with
  // protection off and no glossary.
  std::vector<std::shared_ptr<const ProtectedSource>> spans;
  bool protect_spans = false;
  // The call's own glossary entries (null: none) and the named glossary (null: none), in
  // `glossary` (which borrows them) in that order.
  std::shared_ptr<const Glossary> call_glossary;
  std::shared_ptr<const Glossary> named_glossary;
  GlossaryUse glossary;
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

// Validates and tokenizes `request` for `model`: INVALID_ARGUMENT as above, also for a bad
// glossary entry (naming glossary[i]); NOT_FOUND for a glossary_name the model does not have.
RequestStatus prepare_request(const v1::TranslateRequest& request, const ServedModel& model,
                              const RequestLimits& limits, const DecodingOptions& defaults,
                              PreparedRequest* prepared);

}  // namespace rpt::server
