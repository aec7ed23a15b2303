// The one path from a TranslateRequest to a queued TranslationJob, shared by every protocol
// (gRPC in server/translator_service.cc, HTTP/JSON in server/http_api.cc): the drain check,
// routing, validation, the job and its submission, and how finished sentences fill the response.
// Also ListModels' answer. A front end only decodes its request and encodes the outcome.
#pragma once

#include <memory>
#include <string_view>

#include "proto/translate.pb.h"
#include "server/call_record.h"
#include "server/request_validation.h"
#include "server/translation_job.h"

namespace rpt::server {

class TextAssembly;

// A translation on its way: filled by prepare_translation, submitted by submit_translation.
struct PendingTranslation {
  std::shared_ptr<ServedModel> model;  // held for the call: a replaced model finishes it
  PreparedRequest prepared;
  // The segments to decode: all of them, or with the model's cache those it did not have.
  std::shared_ptr<TranslationJob> job;
  // Between the job and the call (the job's observer): puts segments back into texts, fills the
  // cache, holds the cached results.
  std::shared_ptr<TextAssembly> assembly;

  int texts() const { return static_cast<int>(prepared.texts.size()); }
  // Marks the job cancelled and wakes its scheduler (any thread; no-op before prepare).
  void cancel() const;
};

// Who a call is from, as its front end read it.
struct CallSource {
  std::string_view api_key;                     // --api-keys; empty: none
  SelectorFields fields = kGrpcSelectorFields;  // how its protocol names the model selector
};

// Routes (so the record learns the model even of a call refused while draining), refuses while
// draining, validates `request` and cuts its texts into segments, looks each segment up in the
// model's cache (unless the request says use_cache false) and builds its job of the others (not
// yet queued) with `deadline`; `observer` gets whole texts. The record learns the model and the
// sentences (segments). With --api-keys, `api_key` must be listed (UNAUTHENTICATED before
// anything else is looked at) and the texts' characters are charged to it once the request is
// valid (PERMISSION_DENIED, QUOTA_EXCEEDED or RESOURCE_EXHAUSTED with retry_after_seconds by the
// key's tenant: server/api_keys.h). Messages name the selector's fields as `source.fields`.
RequestStatus prepare_translation(ServiceContext& service, const v1::TranslateRequest& request,
                                  const CallSource& source, Clock::time_point deadline,
                                  JobObserver* observer, CallRecord& record,
                                  PendingTranslation* pending);

// Queues a prepared job; RESOURCE_EXHAUSTED/INVALID_ARGUMENT from the admission queue (the
// observer is then never called). From here on the observer may be called before this returns:
// texts complete without decoding (cached, blank) from this thread, the others from the
// scheduler's, never two at once, on_finish last. A call with nothing to decode is answered
// here, without the queue.
RequestStatus submit_translation(const PendingTranslation& pending);

// Fills `out` with one finished text and counts its target tokens on `record`.
void collect_sentence(const TranslationResult& result, const PendingTranslation& pending,
                      CallRecord& record, v1::Translation* out);

// ListModels: the loaded models, or UNAVAILABLE while draining.
RequestStatus list_models(ServiceContext& service, v1::ListModelsResponse* response);

}  // namespace rpt::server
