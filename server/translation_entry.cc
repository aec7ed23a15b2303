#include "server/translation_entry.h"

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

  auto job = std::make_shared<TranslationJob>();
  job->id = record.number();
  job->source_ids = pending->prepared.source_ids;
  job->spans = pending->prepared.spans;
  job->span_protector = pending->model->span_protector.get();
  job->options = pending->prepared.options;
  job->deadline = deadline;
  job->observer = observer;
  record.add_sentences(static_cast<int>(job->source_ids.size()), job->source_tokens());
  pending->job = std::move(job);
  return RequestStatus::Ok();
}

RequestStatus submit_translation(const PendingTranslation& pending) {
  return pending.model->scheduler->submit(pending.job);
}

void collect_sentence(const TranslationResult& result, const PendingTranslation& pending,
                      CallRecord& record, v1::Translation* out) {
  out->set_source_tokens(static_cast<std::uint32_t>(result.source_tokens));
  out->set_protected_spans(static_cast<std::uint32_t>(result.protected_spans));
  if (!result.hypotheses.empty()) {
    const auto target_tokens = result.hypotheses[0].ids.size();
    out->set_target_tokens(static_cast<std::uint32_t>(target_tokens));
    record.add_target_tokens(static_cast<long>(target_tokens));
  }
  for (const TranslationHypothesis& h : result.hypotheses) {
    v1::Hypothesis* hypothesis = out->add_hypotheses();
    hypothesis->set_text(h.text);
    hypothesis->set_spans_kept(h.spans_kept);
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
  }
  return RequestStatus::Ok();
}

}  // namespace rpt::server
