// Step-level (in-flight) batching for one model (docs/engine.md "Step-level (in-flight) batching").
// One thread owns an rpt::BatchDecoder and loops: drop sentences of cancelled, expired or failed
// calls (freeing their rows), admit queued sentences under the step budget and encode them, run one
// decoder step for every active row, and deliver the sentences that finished.
//
// Sentences wait in a FairQueue (server/fair_queue.h): one queue per tenant of --api-keys, from
// which admission picks by start-time fair queueing weighted by the tenants' priorities, and
// whose bounds refuse a tenant past its share while others wait. Without keys every call is of
// one tenant: one queue, first come first served.
//
// A failed encoding or step (most often the memory limit: sentences that fit alone may not fit
// together) loses nothing in flight: the sentences go back ahead of every queued one and at most
// half as many are admitted at once (bisecting towards the culprit), one more again for every
// sentence delivered. A sentence whose group failed twice while small (two sentences at most),
// or that was requeued many times, runs next on its own, on a fresh decoder (nothing else
// holding memory); only a sentence that fails so fails its call, and admission opens up again.
// So every sentence gets a verdict.
//
// Finished sentences are handed to their calls on a second thread (a SerialExecutor): making
// the result text, restoring spans and the call's response happen there, in the order the
// scheduler decided them, while its own thread goes on decoding. The scheduler thread decides
// every verdict (a call's last sentence or its failure); the hand-over thread calls the
// observers, and fails a call whose result cannot be made (INTERNAL) without waiting for the
// scheduler.
//
// Thread safety: submit(), wake() and stop() may be called from any thread; observers are called
// from the hand-over thread only, one call at a time.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "engine/batch_decoder.h"
#include "engine/engine.h"
#include "engine/model.h"
#include "server/fair_queue.h"
#include "server/metrics.h"
#include "server/server_options.h"
#include "server/serial_executor.h"
#include "server/translation_job.h"

namespace rpt::server {

class Scheduler {
 public:
  Scheduler(std::string model_name, std::shared_ptr<const Engine> engine, SchedulerOptions options,
            ModelMetrics metrics);
  ~Scheduler();  // stop() and join
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Queues every text of `job`, or refuses at once: RESOURCE_EXHAUSTED when the queue would pass
  // its bounds or the job's tenant its share of them (judge_admission), INVALID_ARGUMENT when the
  // call alone is larger than a bound, UNAVAILABLE once stopped. When refused the observer is
  // never called.
  RequestStatus submit(const std::shared_ptr<TranslationJob>& job);
  // Makes the loop look at cancellation flags now (after setting TranslationJob::cancelled).
  void wake();
  // Finishes every remaining call with UNAVAILABLE and ends the thread. Idempotent.
  void stop();

 private:
  // Failed encodings or steps a sentence was part of.
  struct Retries {
    int small_group_failures = 0;  // in groups of at most two sentences
    int requeues = 0;              // in any group
    bool solo() const;             // it must run on its own next
  };
  struct QueuedSentence {
    std::shared_ptr<TranslationJob> job;
    int index = 0;
    Clock::time_point queued_at;
    Retries retries;
  };
  struct DeadJob {
    std::shared_ptr<TranslationJob> job;
    RequestStatus status;  // why it cannot continue; OK when it already finished
  };
  struct ActiveSentence {
    std::shared_ptr<TranslationJob> job;
    int index = 0;
    long cost = 0;       // source tokens x beam
    bool alone = false;  // on its own in a fresh decoder, and nothing joined it since
    Retries retries;
  };

  // The scheduler thread: rounds until stopped.
  void run();
  // One round: purge, admit, encode, step. False once stopping (everything left is finished).
  // A round that throws outside the guarded decoder calls fails only the calls it was decoding
  // or moving (INTERNAL); the next round goes on.
  bool run_once();
  // Removes queued sentences of dead calls (cancelled, expired, finished); scans the queue only
  // when a call was cancelled or finished, or a queued call's deadline passed; caller holds
  // mutex_.
  void purge_queue(std::vector<DeadJob>& dead);
  // Pops sentences that fit the step budget, in the fair queue's order; caller holds mutex_.
  std::vector<QueuedSentence> admit();
  // Queues `sentence` behind its tenant's, or a `retry` ahead of every sentence; caller holds
  // mutex_.
  void enqueue(QueuedSentence sentence, bool retry);
  // The refusal of a call of `call` that `admission` did not admit.
  RequestStatus refusal(const TranslationJob& job, const QueueLoad& call,
                        const QueueAdmission& admission) const;
  // Records the queue time of sentences of a tenant (with --api-keys).
  void observe_tenant_wait(const std::string& tenant, double seconds);
  // Frees the rows of dead calls' sentences (decoder cancel).
  void cancel_dead_active(std::vector<DeadJob>& dead);
  void encode(std::vector<QueuedSentence> admitted);
  void step();
  // Queues a finished sentence for its call (and the call's end after its last sentence); on the
  // hand-over thread a failure to build or deliver it fails that call.
  void deliver(ActiveSentence sentence, std::vector<Hypothesis> hypotheses);
  // After a failed encoding or step: `failed` (admission order) go back to the queue's front
  // and admission narrows to `admit_at_most`; a sentence that failed `alone` (on a fresh
  // decoder) fails its call.
  void retry_or_fail(std::vector<QueuedSentence> failed, const RequestStatus& status,
                     int admit_at_most, bool alone);
  // The active sentences in admission order, removed from active_ (the decoder is reset).
  std::vector<QueuedSentence> take_active();
  void fail_active(const RequestStatus& status);
  // Decides `job`'s verdict (once) and queues on_finish behind what was queued for it.
  void finish(const std::shared_ptr<TranslationJob>& job, const RequestStatus& status);
  void update_gauges();

  const std::string model_name_;
  const std::shared_ptr<const Engine> engine_;
  const std::shared_ptr<const Model> model_;
  const SchedulerOptions options_;
  const ModelMetrics metrics_;

  std::mutex mutex_;
  std::condition_variable wake_;
  FairQueue<QueuedSentence> queue_;  // guarded by mutex_
  bool stopping_ = false;            // guarded by mutex_
  // What makes purge_queue scan the queue (a scan every step costs O(queued sentences): 57% of a
  // server's time with 25,000 sentences queued). Guarded by mutex_: a call was cancelled since
  // the last scan; no queued sentence's call has an earlier deadline.
  bool cancelled_since_purge_ = false;
  Clock::time_point earliest_queued_deadline_ = Clock::time_point::max();

  // Scheduler thread only.
  bool finished_since_purge_ = false;  // a call finished, perhaps with sentences queued
  BatchDecoder decoder_;
  std::unordered_map<std::uint64_t, ActiveSentence> active_;  // by decoder sentence id
  long active_cost_ = 0;
  std::uint64_t next_sentence_id_ = 0;
  // Sentences admitted at once at most: options_.max_active_sentences, narrowed after failures.
  int admission_limit_;
  std::unordered_map<std::string, prometheus::Histogram*> tenant_waits_;  // resolved, by tenant

  SerialExecutor handover_;  // observers' calls; closed after thread_ has ended
  std::thread thread_;       // last: starts after every member above exists
};

}  // namespace rpt::server
