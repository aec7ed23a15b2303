// A translation call as the scheduler sees it: source ids of its texts, decoding options, a
// deadline, and an observer that receives each sentence as it finishes and then the final status.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/beam_search.h"
#include "engine/translator.h"
#include "server/status.h"

namespace rpt::server {

using Clock = std::chrono::steady_clock;

// Tokens in all of `texts`.
inline long total_tokens(const std::vector<std::vector<int>>& texts) {
  long total = 0;
  for (const auto& ids : texts) total += static_cast<long>(ids.size());
  return total;
}

// Implemented by the call (through its TextAssembly, server/text_assembly.h). Called from the
// scheduler's hand-over thread, and for results known before decoding from the submitting
// thread, never two at once: on_sentence once per text, as it finishes (any order), then
// on_finish exactly once, last. After on_finish nothing touches the observer again (the call may
// be gone).
class JobObserver {
 public:
  virtual ~JobObserver() = default;
  virtual void on_sentence(int index, TranslationResult result) = 0;
  virtual void on_finish(const RequestStatus& status) = 0;
};

struct TranslationJob {
  std::uint64_t id = 0;                      // for logs
  std::vector<std::vector<int>> source_ids;  // one non-empty list per text
  // Per text, what span protection did (nullptr: off or no span); empty: none for any text.
  std::vector<std::shared_ptr<const ProtectedSource>> spans;
  const SpanProtector* span_protector = nullptr;  // the served model's; outlives the job
  DecodingOptions options;
  Clock::time_point deadline = Clock::time_point::max();
  JobObserver* observer = nullptr;
  // Whose call (--api-keys: the key's tenant; empty without keys, one anonymous tenant for every
  // call) and its weight in the scheduler's fair admission (server/fair_queue.h).
  std::string tenant;
  int priority = 1;

  // Set from any thread (the call was cancelled); the scheduler frees the job's rows and
  // finishes it with CANCELLED before its next step.
  std::atomic<bool> cancelled{false};

  // Scheduler thread only.
  Clock::time_point submitted;
  int remaining = 0;      // texts not yet delivered
  bool finished = false;  // its verdict is decided: on_finish is queued (or has been called)

  // Hand-over thread only: on_finish has been called (the observer is not to be touched).
  bool closed = false;

  long source_tokens() const { return total_tokens(source_ids); }
};

}  // namespace rpt::server
