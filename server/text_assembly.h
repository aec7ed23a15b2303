// Between a job of segments and the call that asked for texts: each decoded segment goes to the
// model's cache (when there is one), and each text whose segments are all in goes to the call,
// put back into its layout and markup (engine/text_segments.h). Results known before decoding
// (cache hits, blank texts) are delivered once the job is queued; the job's final status is held
// back until they are.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "server/request_validation.h"
#include "server/translation_cache.h"
#include "server/translation_job.h"

namespace rpt::server {

class TextAssembly final : public JobObserver {
 public:
  // `call` receives one on_sentence per text (by its index in the request), then on_finish.
  // `cache` (null: none) stores each decoded segment under its key.
  TextAssembly(JobObserver* call, const PreparedRequest& prepared, TranslationCache* cache);

  // Filled before the job is queued.
  std::vector<int> segment_index;  // per sentence of the job, its segment in the request
  std::vector<std::string> keys;   // per sentence of the job, its cache key (with a cache)
  std::vector<std::pair<int, TranslationResult>> known;  // segment, result (cache hits)

  void on_sentence(int index, TranslationResult result) override;
  void on_finish(const RequestStatus& status) override;

  // The known results (and the blank texts, complete without any), then the job's final status
  // if it came meanwhile. Call once, after the job was queued (or when it has nothing to decode).
  // Never throws: a text that cannot be put back turns the final status into INTERNAL.
  void deliver_known();

 private:
  // Under mutex_: stores a segment's result and hands its text on when complete.
  void add_segment(int segment, TranslationResult result);
  void deliver_text(std::size_t text);

  JobObserver* const call_;
  TranslationCache* const cache_;
  std::vector<std::shared_ptr<const documents::Document>> documents_;  // per text
  std::vector<int> first_segment_;                                     // per text
  std::vector<int> owner_;                                             // per segment, its text
  std::vector<std::vector<TranslationResult>> results_;                // per text, per segment
  std::vector<int> missing_;  // per text, segments not yet in
  int n_best_ = 1;
  std::mutex mutex_;  // one delivery to the call at a time
  bool known_delivered_ = false;
  std::optional<RequestStatus> held_status_;
  std::optional<RequestStatus> failure_;  // a text could not be put back: the call's outcome
};

}  // namespace rpt::server
