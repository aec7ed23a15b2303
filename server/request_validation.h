// Checks a TranslateRequest against the server's limits and turns it into what the scheduler
// needs. Every refusal is INVALID_ARGUMENT with a message naming the text or option and the limit.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "documents/document.h"
#include "engine/beam_search.h"
#include "engine/span_protection.h"
#include "proto/translate.pb.h"
#include "server/model_registry.h"
#include "server/server_options.h"
#include "server/status.h"

namespace rpt::server {

// One text of a request: how it was cut (its parts and their segments, documents/document.h)
// and where its segments are among the request's (PreparedRequest::source_ids).
struct PreparedText {
  std::shared_ptr<const documents::Document> document;
  int first_segment = 0;
  int segments() const { return static_cast<int>(document->segments()); }
};

struct PreparedRequest {
  std::vector<PreparedText> texts;           // one per request text
  std::vector<std::vector<int>> source_ids;  // one non-empty id list per segment of every text
  std::vector<int> segment_owner;            // per segment, the index of its text
  std::vector<std::string> segment_texts;    // per segment, its source text (the cache's key)
  // Per segment, what span protection and the glossary did (nullptr: nothing to keep); empty
  // with protection off and no glossary.
  std::vector<std::shared_ptr<const ProtectedSource>> spans;
  bool protect_spans = false;
  // The call's own glossary entries (null: none) and the named glossary (null: none), in
  // `glossary` (which borrows them) in that order.
  std::shared_ptr<const Glossary> call_glossary;
  std::shared_ptr<const Glossary> named_glossary;
  GlossaryUse glossary;
  // The model's language pair the texts are translated in (ModelRoute): the prefix each segment
  // is read after, so part of the cache key.
  ChosenPair pair;
  DecodingOptions options;              // defaults filled in, validated
  documents::DocumentOptions document;  // format, segmentation, ignored tags
  bool return_scores = false;
  bool return_tokens = false;
  bool use_cache = true;  // DecodingOptions.use_cache (unset: true)

  int segments() const { return static_cast<int>(source_ids.size()); }
};

// The decoding options of `request` with the server's defaults for unset fields, checked
// against `limits` and the model.
RequestStatus resolve_options(const v1::DecodingOptions& request, const DecodingOptions& defaults,
                              const RequestLimits& limits, const Model& model,
                              DecodingOptions* resolved);

// Validates `request` for `model` and its language pair `pair` (ModelRegistry::find), cuts its
// texts into segments (by the rules of the pair's source language) and tokenizes them after the
// pair's prefix (a segment over the model's input limit cut again): INVALID_ARGUMENT as above,
// also for a bad glossary entry (naming glossary[i]); NOT_FOUND for a glossary_name the model
// does not have.
RequestStatus prepare_request(const v1::TranslateRequest& request, const ServedModel& model,
                              const ChosenPair& pair, const ServerOptions& options,
                              PreparedRequest* prepared);

}  // namespace rpt::server
