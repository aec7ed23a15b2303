#include "server/scheduler.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "engine/errors.h"
#include "engine/batch_decoder.h"  // admission_group_for, sentences_to_admit

namespace rpt::server {
namespace {

// Resolved and checked before the scheduler's thread starts (a throw after it would end the
// process).
SchedulerOptions checked(SchedulerOptions options, const Engine& engine) {
  options.admission_group = admission_group_for(engine.options().device, options.admission_group,
                                                options.max_active_sentences);
  return options;
}

// Failures before a sentence runs on its own: in small groups (where it is likely the culprit),
// or in any (a bound, should admission keep widening under load between failures).
constexpr int kSmallGroup = 2;
constexpr int kSmallGroupFailuresBeforeSolo = 2;
constexpr int kRequeuesBeforeSolo = 16;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Source tokens of the text at `index` of `job`.
long sentence_tokens(const TranslationJob& job, int index) {
  return static_cast<long>(job.source_ids[static_cast<std::size_t>(index)].size());
}

// Why a call can no longer continue, or nullopt-like OK when it can.
RequestStatus dead_reason(const TranslationJob& job, Clock::time_point now, const char* where) {
  // The deadline wins over cancellation: gRPC also cancels a call whose deadline passed.
  if (now >= job.deadline) {
    return {StatusCode::kDeadlineExceeded, std::string("deadline exceeded while ") + where};
  }
  if (job.cancelled.load()) return {StatusCode::kCancelled, "call cancelled by the client"};
  return RequestStatus::Ok();
}

}  // namespace

bool Scheduler::Retries::solo() const {
  return small_group_failures >= kSmallGroupFailuresBeforeSolo || requeues >= kRequeuesBeforeSolo;
}

Scheduler::Scheduler(std::string model_name, std::shared_ptr<const Engine> engine,
                     SchedulerOptions options, ModelMetrics metrics)
    : model_name_(std::move(model_name)),
      engine_(std::move(engine)),
      model_(engine_->shared_model()),
      options_(checked(options, *engine_)),
      metrics_(metrics),
      decoder_(engine_),
      admission_limit_(options_.max_active_sentences),
      handover_("model " + model_name_ + " hand-over"),
      thread_([this] { run(); }) {}

Scheduler::~Scheduler() {
  stop();
  if (thread_.joinable()) thread_.join();
  handover_.close();  // every call's on_finish has run when the scheduler is gone
}

RequestStatus Scheduler::submit(const std::shared_ptr<TranslationJob>& job) {
  const long tokens = job->source_tokens();
  const auto sentences = static_cast<long>(job->source_ids.size());
  RequestStatus refused;
  const char* refused_bound = nullptr;  // the refusal metric's
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return {StatusCode::kUnavailable, "the server is shutting down"};
    if (sentences > options_.max_queued_sentences || tokens > options_.max_queued_tokens) {
      // Never admissible, even to an idle server: not a "retry later".
      return {StatusCode::kInvalidArgument,
              "this call has " + std::to_string(sentences) + " segments and " +
                  std::to_string(tokens) + " source tokens; model '" + model_name_ +
                  "' queues at most " + std::to_string(options_.max_queued_sentences) +
                  " segments and " + std::to_string(options_.max_queued_tokens) +
                  " tokens: split it into smaller calls"};
    }
    const QueueLoad call{sentences, tokens};
    const QueueAdmission admission =
        queue_.admission(job->tenant, job->priority, call,
                         {options_.max_queued_sentences, options_.max_queued_tokens});
    if (admission.admitted()) {
      job->submitted = Clock::now();
      job->remaining = static_cast<int>(sentences);
      for (int i = 0; i < static_cast<int>(sentences); ++i) {
        enqueue({job, i, job->submitted, {}}, false);
      }
      metrics_.queued_sentences->Set(static_cast<double>(queue_.size()));
      metrics_.queued_tokens->Set(static_cast<double>(queue_.tokens()));
    } else {
      refused = refusal(*job, call, admission);
      refused_bound = admission.verdict == QueueVerdict::kOverShare ? "share" : "queue";
    }
  }
  if (!refused.ok()) {
    if (!job->tenant.empty()) metrics_.tenants.count_refusal(job->tenant, refused_bound);
    return refused;
  }
  wake_.notify_one();
  return RequestStatus::Ok();
}

RequestStatus Scheduler::refusal(const TranslationJob& job, const QueueLoad& call,
                                 const QueueAdmission& admission) const {
  const QueueLoad held = queue_.load(job.tenant);
  if (admission.verdict == QueueVerdict::kOverShare) {
    return {StatusCode::kResourceExhausted,
            "tenant " + job.tenant + " is over its share of the queue of model '" + model_name_ +
                "' while other tenants wait: it holds " + std::to_string(held.sentences) +
                " sentences and " + std::to_string(held.tokens) + " tokens of its " +
                std::to_string(admission.share.sentences) + " and " +
                std::to_string(admission.share.tokens) + " (priority " +
                std::to_string(job.priority) + " of " + std::to_string(admission.queued_weight) +
                " queued); this call adds " + std::to_string(call.sentences) + " and " +
                std::to_string(call.tokens) + "; retry later"};
  }
  return {StatusCode::kResourceExhausted,
          "model '" + model_name_ + "' is overloaded: its queue holds " +
              std::to_string(queue_.size()) + " sentences and " + std::to_string(queue_.tokens()) +
              " tokens (limits " + std::to_string(options_.max_queued_sentences) + " and " +
              std::to_string(options_.max_queued_tokens) + "); this call adds " +
              std::to_string(call.sentences) + " and " + std::to_string(call.tokens) +
              "; retry later"};
}

void Scheduler::enqueue(QueuedSentence sentence, bool retry) {
  const TranslationJob& job = *sentence.job;
  earliest_queued_deadline_ = std::min(earliest_queued_deadline_, job.deadline);
  const long tokens = sentence_tokens(job, sentence.index);
  const long cost = tokens * job.options.beam_size;  // as the step budget counts it
  if (retry) {
    queue_.push_front(job.tenant, job.priority, std::move(sentence), tokens, cost);
  } else {
    queue_.push_back(job.tenant, job.priority, std::move(sentence), tokens, cost);
  }
}

void Scheduler::wake() {
  {
    std::lock_guard lock(mutex_);
    cancelled_since_purge_ = true;
  }
  wake_.notify_one();
}

void Scheduler::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
}

void Scheduler::run() {
  while (run_once()) {
  }
}

bool Scheduler::run_once() {
  const RequestStatus shutting_down{StatusCode::kUnavailable,
                                    "the server shut down before the call finished"};
  std::vector<DeadJob> dead;
  std::vector<QueuedSentence> admitted;
  // The calls of the sentences this round takes out of queue_ before they reach active_: if the
  // round fails, they are in neither, and only this list can still finish them.
  std::vector<std::shared_ptr<TranslationJob>> admitted_jobs;
  try {
    bool stopping = false;
    {
      std::unique_lock lock(mutex_);
      if (active_.empty()) {
        wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      }
      // Room first: no allocation may fail halfway through moving entries out of queue_ (a
      // round admits at most admission_limit_ sentences, or one on its own; purge_queue makes
      // its own room).
      dead.reserve(active_.size());
      admitted_jobs.reserve(std::min(static_cast<std::size_t>(queue_.size()),
                                     static_cast<std::size_t>(std::max(admission_limit_, 1))));
      stopping = stopping_;
      if (stopping) {
        dead.reserve(active_.size() + static_cast<std::size_t>(queue_.size()));
        queue_.remove_if([&](QueuedSentence& queued) {
          dead.push_back({std::move(queued.job), shutting_down});
          return true;
        });
      } else {
        purge_queue(dead);
        admitted = admit();
        for (const QueuedSentence& queued : admitted) admitted_jobs.push_back(queued.job);
      }
      metrics_.queued_sentences->Set(static_cast<double>(queue_.size()));
      metrics_.queued_tokens->Set(static_cast<double>(queue_.tokens()));
    }
    if (stopping) {
      for (auto& [job, status] : dead) finish(job, status);
      fail_active(shutting_down);
      update_gauges();
      return false;
    }
    cancel_dead_active(dead);
    for (auto& [job, status] : dead) finish(job, status);  // no-op for already finished ones
    encode(std::move(admitted));
    step();
    update_gauges();
  } catch (...) {
    // Anything thrown outside the guarded decoder calls: fail the calls being decoded or in
    // transit (INTERNAL), finish the dead ones, and go on with the next round.
    const RequestStatus status = status_from_exception(std::current_exception());
    spdlog::error("model {}: scheduler round failed ({}); failing the {} sentences decoding",
                  model_name_, status.message, active_.size());
    const RequestStatus failed{StatusCode::kInternal, "translation failed: " + status.message};
    try {
      for (auto& [job, reason] : dead) finish(job, reason);
      for (const auto& job : admitted_jobs) finish(job, failed);
      fail_active(failed);
      update_gauges();
    } catch (...) {
      spdlog::error("model {}: failing the decoding calls failed too", model_name_);
    }
  }
  return true;
}

void Scheduler::purge_queue(std::vector<DeadJob>& dead) {
  const Clock::time_point now = Clock::now();
  if (!cancelled_since_purge_ && !finished_since_purge_ && now < earliest_queued_deadline_) {
    return;  // no queued sentence's call can have died since the last scan
  }
  cancelled_since_purge_ = finished_since_purge_ = false;
  earliest_queued_deadline_ = Clock::time_point::max();
  dead.reserve(dead.size() + static_cast<std::size_t>(queue_.size()) + active_.size());
  queue_.remove_if([&](QueuedSentence& queued) {
    RequestStatus reason = dead_reason(*queued.job, now, "queued");
    if (!queued.job->finished && reason.ok()) {
      earliest_queued_deadline_ = std::min(earliest_queued_deadline_, queued.job->deadline);
      return false;
    }
    dead.push_back({std::move(queued.job), std::move(reason)});
    return true;
  });
}

std::vector<Scheduler::QueuedSentence> Scheduler::admit() {
  std::vector<QueuedSentence> admitted;
  if (!options_.inflight_batching && !active_.empty()) return admitted;  // static batching
  for (const auto& [id, sentence] : active_) {
    if (sentence.retries.solo()) return admitted;  // it runs on its own
  }
  const int free_slots = admission_limit_ - static_cast<int>(active_.size());
  if (free_slots > 0 && sentences_to_admit(static_cast<std::size_t>(free_slots),
                                           static_cast<std::size_t>(queue_.size()), active_.empty(),
                                           options_.admission_group) == 0) {
    return admitted;  // joiners wait until a group of them can join
  }
  long cost = active_cost_;
  while (!queue_.empty()) {
    const QueuedSentence& next = queue_.front();  // the fair queue's pick
    if (next.retries.solo()) {
      // On its own: once the decoder is empty, and nothing joins it.
      if (active_.empty() && admitted.empty()) admitted.push_back(queue_.pop_front());
      break;
    }
    const long sentence_cost = sentence_tokens(*next.job, next.index) * next.job->options.beam_size;
    const bool nothing_running = active_.empty() && admitted.empty();
    if (!nothing_running &&
        (static_cast<int>(active_.size() + admitted.size()) >= admission_limit_ ||
         cost + sentence_cost > options_.max_batch_tokens)) {
      break;  // in order: the pick that does not fit waits for rows to free up
    }
    cost += sentence_cost;
    admitted.push_back(queue_.pop_front());
  }
  return admitted;
}

void Scheduler::cancel_dead_active(std::vector<DeadJob>& dead) {
  const Clock::time_point now = Clock::now();
  for (auto it = active_.begin(); it != active_.end();) {
    TranslationJob& job = *it->second.job;
    RequestStatus reason = dead_reason(job, now, "decoding");
    if (!job.finished && reason.ok()) {
      ++it;
      continue;
    }
    decoder_.cancel(it->first);
    active_cost_ -= it->second.cost;
    dead.push_back({it->second.job, std::move(reason)});
    it = active_.erase(it);
  }
}

void Scheduler::encode(std::vector<QueuedSentence> admitted) {
  // A call may have finished since its sentences were admitted (another of them was cancelled,
  // expired or failed): do not spend work on them.
  std::erase_if(admitted, [](const QueuedSentence& queued) { return queued.job->finished; });
  if (admitted.empty()) return;
  const Clock::time_point start = Clock::now();
  std::vector<SentenceRequest> requests;
  for (QueuedSentence& queued : admitted) {
    const double waited = std::chrono::duration<double>(start - queued.queued_at).count();
    metrics_.queue_seconds->Observe(waited);
    if (!queued.job->tenant.empty()) observe_tenant_wait(queued.job->tenant, waited);
    const std::uint64_t id = next_sentence_id_++;
    const auto index = static_cast<std::size_t>(queued.index);
    const auto& spans = queued.job->spans;
    requests.push_back({.id = id,
                        .source_ids = queued.job->source_ids[index],
                        .options = queued.job->options,
                        .constraints = index < spans.size() && spans[index]
                                           ? spans[index]->constraints
                                           : nullptr});
  }
  if (admitted.size() == 1 && admitted.front().retries.solo() && !decoder_.fresh()) {
    decoder_.reset();  // memory kept from finished sentences must not decide its verdict
  }
  const bool alone = decoder_.fresh() && active_.empty() && admitted.size() == 1;
  try {
    decoder_.add(requests);
  } catch (...) {
    // Nothing was added: the active sentences carry on, the new ones wait for fewer to run.
    const RequestStatus status = status_from_exception(std::current_exception());
    const int total = static_cast<int>(active_.size() + admitted.size());
    spdlog::warn("model {}: encoding {} sentences ({} decoding) failed: {}", model_name_,
                 admitted.size(), active_.size(), status.message);
    retry_or_fail(std::move(admitted), status, std::max(1, total / 2), alone);
    return;
  }
  metrics_.encode_seconds->Observe(seconds_since(start));
  for (auto& [id, sentence] : active_) sentence.alone = false;  // it has company now
  for (std::size_t i = 0; i < admitted.size(); ++i) {
    const long cost =
        static_cast<long>(requests[i].source_ids.size()) * admitted[i].job->options.beam_size;
    active_cost_ += cost;
    active_.emplace(requests[i].id, ActiveSentence{std::move(admitted[i].job), admitted[i].index,
                                                   cost, alone, admitted[i].retries});
  }
}

void Scheduler::step() {
  if (decoder_.empty()) return;
  const int rows = decoder_.active_rows();
  const Clock::time_point start = Clock::now();
  std::vector<FinishedSentence> finished;
  try {
    finished = decoder_.step();
  } catch (...) {
    const RequestStatus status = status_from_exception(std::current_exception());
    spdlog::warn("model {}: decoder step over {} sentences failed: {}", model_name_, active_.size(),
                 status.message);
    const bool alone = active_.size() == 1 && active_.begin()->second.alone;
    std::vector<QueuedSentence> failed = take_active();
    const int count = static_cast<int>(failed.size());
    retry_or_fail(std::move(failed), status, std::max(1, count / 2), alone);
    return;
  }
  metrics_.decode_step_seconds->Observe(seconds_since(start));
  metrics_.active_rows_per_step->Observe(rows);

  for (FinishedSentence& done : finished) {
    auto found = active_.find(done.id);
    if (found == active_.end()) continue;
    ActiveSentence sentence = std::move(found->second);
    active_.erase(found);
    active_cost_ -= sentence.cost;
    deliver(std::move(sentence), std::move(done.hypotheses));
    admission_limit_ = std::min(options_.max_active_sentences, admission_limit_ + 1);
  }
  // Idle, and holding over half of a memory limit (cache slots of finished sentences are kept
  // for reuse): give it back, so that later sentences are not refused for memory nobody uses.
  const std::size_t limit = engine_->options().memory_limit_bytes;
  if (active_.empty() && limit > 0 && decoder_.device_memory_bytes() > limit / 2) {
    decoder_.reset();
  }
}

void Scheduler::deliver(ActiveSentence sentence, std::vector<Hypothesis> hypotheses) {
  TranslationJob& job = *sentence.job;
  if (job.finished) return;
  const bool last = --job.remaining == 0;
  if (last) job.finished = true;  // its on_finish follows its last sentence on the hand-over
  handover_.post([job = std::move(sentence.job), index = sentence.index,
                  hypotheses = std::move(hypotheses), last, model = model_, metrics = metrics_,
                  name = model_name_]() mutable {
    if (job->closed) return;  // failed already on this thread
    const Clock::time_point start = Clock::now();
    try {
      const auto i = static_cast<std::size_t>(index);
      const auto& source = job->source_ids[i];
      const ProtectedSource* spans = i < job->spans.size() ? job->spans[i].get() : nullptr;
      TranslationResult result =
          make_result(*model, job->span_protector, spans, std::move(hypotheses),
                      static_cast<int>(source.size()));
      metrics.source_tokens->Increment(static_cast<double>(source.size()));
      metrics.protected_spans->Increment(result.protected_spans);
      if (!result.hypotheses.empty()) {
        metrics.target_tokens->Increment(static_cast<double>(result.hypotheses[0].ids.size()));
        if (!result.hypotheses[0].spans_kept) metrics.spans_lost->Increment();
      }
      for (const GlossaryTermResult& term : result.glossary_terms) {
        (term.kept ? metrics.glossary_terms_kept : metrics.glossary_terms_missed)->Increment();
      }
      job->observer->on_sentence(index, std::move(result));
    } catch (...) {
      const RequestStatus status = status_from_exception(std::current_exception());
      spdlog::error("model {}: delivering sentence {} of call {} failed: {}", name, index, job->id,
                    status.message);
      job->closed = true;
      job->observer->on_finish({StatusCode::kInternal, "translation failed: " + status.message});
      return;
    }
    metrics.deliver_seconds->Observe(seconds_since(start));
    if (last) {
      job->closed = true;
      job->observer->on_finish(RequestStatus::Ok());
    }
  });
}

std::vector<Scheduler::QueuedSentence> Scheduler::take_active() {
  std::vector<std::pair<std::uint64_t, ActiveSentence>> sorted(active_.begin(), active_.end());
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });  // admission order
  std::vector<QueuedSentence> taken;
  const Clock::time_point now = Clock::now();
  for (auto& [id, sentence] : sorted) {
    taken.push_back({std::move(sentence.job), sentence.index, now, sentence.retries});
  }
  active_.clear();
  active_cost_ = 0;
  decoder_.reset();
  return taken;
}

void Scheduler::retry_or_fail(std::vector<QueuedSentence> failed, const RequestStatus& status,
                              int admit_at_most, bool alone) {
  if (alone) {
    // Alone, it cannot succeed by waiting. Out of memory (the configured limit or the device's)
    // is RESOURCE_EXHAUSTED; anything else is an internal failure.
    const bool passes_through = status.code == StatusCode::kResourceExhausted ||
                                status.code == StatusCode::kInvalidArgument;
    const StatusCode code = passes_through ? status.code : StatusCode::kInternal;
    spdlog::error("model {}: a sentence of call {} failed on its own: {}", model_name_,
                  failed.front().job->id, status.message);
    finish(failed.front().job, {code, "translation failed: " + status.message});
    admission_limit_ = options_.max_active_sentences;  // the culprit is found
    return;
  }
  admission_limit_ = std::min(admission_limit_, admit_at_most);
  if (active_.empty() && !decoder_.fresh()) {
    // Memory kept by sentences that already finished (cache slots are reused, not freed) may be
    // what is missing: the retry starts from a fresh decoder.
    decoder_.reset();
  }
  metrics_.retried_sentences->Increment(static_cast<double>(failed.size()));
  const bool small_group = failed.size() <= kSmallGroup;
  const Clock::time_point now = Clock::now();
  std::lock_guard lock(mutex_);
  for (auto it = failed.rbegin(); it != failed.rend(); ++it) {
    it->retries.small_group_failures += small_group ? 1 : 0;
    ++it->retries.requeues;
    it->queued_at = now;            // rpt_queue_duration_seconds: the wait of each admission
    enqueue(std::move(*it), true);  // ahead of every tenant's, in admission order
  }
}

void Scheduler::fail_active(const RequestStatus& status) {
  for (QueuedSentence& sentence : take_active()) finish(sentence.job, status);
}

void Scheduler::finish(const std::shared_ptr<TranslationJob>& job, const RequestStatus& status) {
  if (job->finished) return;
  job->finished = true;
  finished_since_purge_ = true;  // its sentences still queued, if any, go at the next purge
  handover_.post([job, status] {
    if (job->closed) return;
    job->closed = true;
    job->observer->on_finish(status);
  });
}

void Scheduler::observe_tenant_wait(const std::string& tenant, double seconds) {
  auto found = tenant_waits_.find(tenant);
  if (found == tenant_waits_.end()) {
    found = tenant_waits_.emplace(tenant, metrics_.tenants.wait_seconds(tenant)).first;
  }
  if (found->second != nullptr) found->second->Observe(seconds);
}

void Scheduler::update_gauges() {
  metrics_.active_rows->Set(decoder_.active_rows());
  metrics_.active_sentences->Set(decoder_.active_sentences());
  metrics_.decoder_memory_bytes->Set(static_cast<double>(decoder_.device_memory_bytes()));
}

}  // namespace rpt::server
