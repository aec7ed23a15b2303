#include "server/translation_entry.h"

#include <mutex>
#include <optional>
#include <utility>

namespace rpt::server {

// Between a job of the texts the cache did not have and the call: maps each decoded sentence
// back to its index in the call and stores it in the cache; delivers the cached sentences once
// the job is queued, and holds back the job's final status until they are.
class CacheFill final : public JobObserver {
 public:
  CacheFill(JobObserver* call, TranslationCache* cache) : call_(call), cache_(cache) {}

  std::vector<int> call_index;  // per text of the job, its index in the call
  std::vector<std::string> keys;  // per text of the job, its cache key
  std::vector<std::pair<int, TranslationResult>> hits;  // call index, cached result

  void on_sentence(int index, TranslationResult result) override {
    const auto i = static_cast<std::size_t>(index);
    cache_->insert(keys[i], result);
    std::lock_guard lock(mutex_);
    call_->on_sentence(call_index[i], std::move(result));
  }

  void on_finish(const RequestStatus& status) override {
    JobObserver* call = call_;
    {
      std::lock_guard lock(mutex_);
      if (!hits_delivered_) {
        held_status_ = status;
        return;
      }
    }
    call->on_finish(status);  // may delete the call, and this with it
  }

  // The cached sentences, then the job's final status if it came meanwhile.
  void deliver_hits() {
    JobObserver* call = call_;
    std::optional<RequestStatus> finished;
    {
      std::lock_guard lock(mutex_);
      for (auto& [index, result] : hits) call_->on_sentence(index, std::move(result));
      hits.clear();
      hits_delivered_ = true;
      finished = held_status_;
    }
    if (finished) call->on_finish(*finished);  // may delete the call, and this with it
  }

 private:
  JobObserver* const call_;
  TranslationCache* const cache_;
  std::mutex mutex_;  // one delivery to the call at a time
  bool hits_delivered_ = false;
  std::optional<RequestStatus> held_status_;
};

namespace {

RequestStatus draining_status() {
  return {StatusCode::kUnavailable, "the server is shutting down; retry on another replica"};
}

}  // namespace

void PendingTranslation::cancel() const {
  if (job == nullptr) return;
  job->cancelled.store(true);
  model->scheduler->wake();
}

RequestStatus prepare_translation(ServiceContext& service, const v1::TranslateRequest& request,
                                  Clock::time_point deadline, JobObserver* observer,
                                  CallRecord& record, PendingTranslation* pending) {
  // Routed first, so that a call refused while draining is counted under its model.
  const v1::ModelSelector& selector = request.model();
  RequestStatus routed = service.registry.find(
      {selector.model(), selector.source_language(), selector.target_language()}, &pending->model);
  if (routed.ok()) record.set_model(pending->model->name);
  if (service.draining.load()) return draining_status();
  if (!routed.ok()) return routed;
  RequestStatus valid = prepare_request(request, *pending->model, service.options.limits,
                                        service.options.default_decoding, &pending->prepared);
  if (!valid.ok()) return valid;

  const PreparedRequest& prepared = pending->prepared;
  auto job = std::make_shared<TranslationJob>();
  job->id = record.number();
  job->span_protector = pending->model->span_protector.get();
  job->options = prepared.options;
  job->deadline = deadline;
  job->observer = observer;
  record.add_sentences(pending->texts(), total_tokens(prepared.source_ids));
  TranslationCache* cache = prepared.use_cache ? pending->model->cache.get() : nullptr;
  if (cache == nullptr) {
    job->source_ids = prepared.source_ids;
    job->spans = prepared.spans;
  } else {
    auto fill = std::make_shared<CacheFill>(observer, cache);
    const bool rewritten = !prepared.spans.empty();
    const std::string glossary = prepared.glossary.identity();
    for (int i = 0; i < pending->texts(); ++i) {
      const auto at = static_cast<std::size_t>(i);
      std::string key = TranslationCache::key(request.texts(i), prepared.options,
                                              prepared.protect_spans, glossary);
      if (std::optional<TranslationResult> hit = cache->find(key)) {
        fill->hits.emplace_back(i, std::move(*hit));
        continue;
      }
      job->source_ids.push_back(prepared.source_ids[at]);
      if (rewritten) job->spans.push_back(prepared.spans[at]);
      fill->call_index.push_back(i);
      fill->keys.push_back(std::move(key));
    }
    record.add_cached_sentences(static_cast<int>(fill->hits.size()));
    job->observer = fill.get();
    pending->cache_fill = std::move(fill);
  }
  pending->job = std::move(job);
  return RequestStatus::Ok();
}

RequestStatus submit_translation(const PendingTranslation& pending) {
  CacheFill* fill = pending.cache_fill.get();
  if (fill != nullptr && pending.job->source_ids.empty()) {  // every text was cached
    fill->on_finish(RequestStatus::Ok());  // held until the hits are delivered
    fill->deliver_hits();  // `pending` may be gone from here on
    return RequestStatus::Ok();
  }
  RequestStatus queued = pending.model->scheduler->submit(pending.job);
  if (queued.ok() && fill != nullptr) fill->deliver_hits();  // `pending` may be gone after
  return queued;
}

void collect_sentence(const TranslationResult& result, const PendingTranslation& pending,
                      CallRecord& record, v1::Translation* out) {
  out->set_source_tokens(static_cast<std::uint32_t>(result.source_tokens));
  out->set_protected_spans(static_cast<std::uint32_t>(result.protected_spans));
  for (const GlossaryTermResult& term : result.glossary_terms) {
    v1::GlossaryTerm* out_term = out->add_glossary_terms();
    out_term->set_source(term.source);
    out_term->set_target(term.target);
    out_term->set_matches(static_cast<std::uint32_t>(term.matches));
    out_term->set_kept(term.kept);
  }
  if (!result.hypotheses.empty()) {
    const auto target_tokens = result.hypotheses[0].ids.size();
    out->set_target_tokens(static_cast<std::uint32_t>(target_tokens));
    record.add_target_tokens(static_cast<long>(target_tokens));
  }
  for (const TranslationHypothesis& h : result.hypotheses) {
    v1::Hypothesis* hypothesis = out->add_hypotheses();
    hypothesis->set_text(h.text);
    hypothesis->set_spans_kept(h.spans_kept);
    hypothesis->set_terms_kept(h.terms_kept);
    if (pending.prepared.return_scores) hypothesis->set_score(h.score);
    if (pending.prepared.return_tokens) {
      for (const std::string& token : h.tokens) hypothesis->add_tokens(token);
    }
  }
}

RequestStatus list_models(ServiceContext& service, v1::ListModelsResponse* response) {
  if (service.draining.load()) return draining_status();
  for (const auto& served : service.registry.models()) {
    const ModelDescription& d = served->description;
    v1::ModelInfo* info = response->add_models();
    info->set_name(d.name);
    info->set_source_language(d.source_language);
    info->set_target_language(d.target_language);
    info->set_device(d.device);
    info->set_dtype(d.dtype);
    info->set_position_type(d.position_type);
    const PositionConfig& position = served->model->config().position;
    if (position.type == PositionType::kRelative) {
      info->set_max_relative_position(
          static_cast<std::uint32_t>(position.encoder_max_relative_position));
    }
    info->set_max_input_length(static_cast<std::uint32_t>(served->max_input_length));
    for (const auto& [name, glossary] : served->glossaries) {
      v1::GlossaryInfo* entry = info->add_glossaries();
      entry->set_name(name);
      entry->set_entries(static_cast<std::uint32_t>(glossary->size()));
    }
  }
  return RequestStatus::Ok();
}

}  // namespace rpt::server
