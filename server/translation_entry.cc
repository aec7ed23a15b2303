#include "server/translation_entry.h"

#include <optional>
#include <string>
#include <utility>

#include "server/text_assembly.h"

namespace rpt::server {

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
                                  const CallSource& source, Clock::time_point deadline,
                                  JobObserver* observer, CallRecord& record,
                                  PendingTranslation* pending) {
  const std::string_view api_key = source.api_key;
  // A caller without a listed key learns nothing of the models (nothing charged yet).
  if (RequestStatus known = service.api_keys.authenticate(api_key); !known.ok()) return known;
  const std::optional<TenantIdentity> tenant = service.api_keys.identify(api_key);
  if (tenant.has_value()) record.set_tenant(tenant->name);  // logs and metrics: never the key
  // Routed first, so that a call refused while draining is counted under its model; a model the
  // tenant may not use is refused before the request is looked at (nothing charged).
  const v1::ModelSelector& selector = request.model();
  ModelRoute route;
  RequestStatus routed = service.registry.find(
      {selector.model(), selector.source_language(), selector.target_language(), source.fields},
      &route);
  pending->model = route.model;
  if (routed.ok()) {
    record.set_model(pending->model->name);
    RequestStatus allowed = service.api_keys.check_model(api_key, pending->model->name);
    if (!allowed.ok()) return allowed;
  }
  if (service.draining.load()) return draining_status();
  if (!routed.ok()) return routed;
  RequestStatus valid =
      prepare_request(request, *pending->model, route.pair, service.options, &pending->prepared);
  if (!valid.ok()) return valid;
  std::int64_t characters = 0;
  for (const std::string& text : request.texts()) characters += billed_characters(text);
  // The tenant and its model were checked above.
  if (RequestStatus charged = service.api_keys.admit(api_key, std::nullopt, characters);
      !charged.ok()) {
    return charged;
  }
  record.add_charged_characters(characters);

  const PreparedRequest& prepared = pending->prepared;
  auto job = std::make_shared<TranslationJob>();
  job->id = record.number();
  job->span_protector = pending->model->span_protector.get();
  job->options = prepared.options;
  job->deadline = deadline;
  if (tenant.has_value()) {  // its scheduler shares the decoder fairly among tenants
    job->tenant = tenant->name;
    job->priority = tenant->priority;
  }
  record.add_sentences(prepared.segments(), total_tokens(prepared.source_ids));
  // Segments are the job's sentences: each looked up in and stored to the cache on its own.
  TranslationCache* cache = prepared.use_cache ? pending->model->cache.get() : nullptr;
  auto assembly = std::make_shared<TextAssembly>(observer, prepared, cache);
  const bool rewritten = !prepared.spans.empty();
  const std::string glossary = cache != nullptr ? prepared.glossary.identity() : std::string();
  // The pair's prefix is what its segments are read after: one pair's translation never answers
  // another's.
  const std::string& prefix = pending->model->model->language_pairs()[prepared.pair.index].prefix;
  for (int i = 0; i < prepared.segments(); ++i) {
    const auto at = static_cast<std::size_t>(i);
    if (cache != nullptr) {
      std::string key = TranslationCache::key(prepared.segment_texts[at], prepared.options,
                                              prepared.protect_spans, glossary, prefix);
      if (std::optional<TranslationResult> hit = cache->find(key)) {
        assembly->known.emplace_back(i, std::move(*hit));
        continue;
      }
      assembly->keys.push_back(std::move(key));
    }
    job->source_ids.push_back(prepared.source_ids[at]);
    if (rewritten) job->spans.push_back(prepared.spans[at]);
    assembly->segment_index.push_back(i);
  }
  record.add_cached_sentences(static_cast<int>(assembly->known.size()));
  job->observer = assembly.get();
  pending->assembly = std::move(assembly);
  pending->job = std::move(job);
  return RequestStatus::Ok();
}

RequestStatus submit_translation(const PendingTranslation& pending) {
  TextAssembly* assembly = pending.assembly.get();
  if (pending.job->source_ids.empty()) {       // every segment cached, or blank texts only
    assembly->on_finish(RequestStatus::Ok());  // held until the known results are delivered
    assembly->deliver_known();                 // `pending` may be gone from here on
    return RequestStatus::Ok();
  }
  RequestStatus queued = pending.model->scheduler->submit(pending.job);
  if (queued.ok()) assembly->deliver_known();  // `pending` may be gone after
  return queued;
}

void collect_sentence(const TranslationResult& result, const PendingTranslation& pending,
                      CallRecord& record, v1::Translation* out) {
  out->set_source_tokens(static_cast<std::uint32_t>(result.source_tokens));
  out->set_protected_spans(static_cast<std::uint32_t>(result.protected_spans));
  out->set_segments(static_cast<std::uint32_t>(result.segments));
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
    for (const LanguagePair& pair : served->model->language_pairs()) {
      v1::LanguagePairInfo* served_pair = info->add_language_pairs();
      served_pair->set_source_language(pair.source);
      served_pair->set_target_language(pair.target);
    }
    for (const auto& [name, glossary] : *served->glossaries.get()) {
      v1::GlossaryInfo* entry = info->add_glossaries();
      entry->set_name(name);
      entry->set_entries(static_cast<std::uint32_t>(glossary->size()));
    }
  }
  return RequestStatus::Ok();
}

}  // namespace rpt::server
