#include "server/metrics.h"

#include <prometheus/text_serializer.h>

namespace rpt::server {
namespace {

using prometheus::BuildCounter;
using prometheus::BuildGauge;
using prometheus::BuildHistogram;

// Latency buckets from 1 ms to ~2 min, roughly x2.5 apart.
prometheus::Histogram::BucketBoundaries latency_buckets() {
  return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 60, 120};
}
prometheus::Histogram::BucketBoundaries step_buckets() {
  return {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1};
}
prometheus::Histogram::BucketBoundaries row_buckets() {
  return {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
}

}  // namespace

Metrics::Metrics()
    : registry_(std::make_shared<prometheus::Registry>()),
      requests_(BuildCounter()
                    .Name("rpt_requests_total")
                    .Help("Finished calls by model, method, protocol (grpc, http) and gRPC "
                          "status code")
                    .Register(*registry_)),
      request_seconds_(BuildHistogram()
                           .Name("rpt_request_duration_seconds")
                           .Help("End-to-end call time, from arrival to the final status")
                           .Register(*registry_)),
      tenant_requests_(BuildCounter()
                           .Name("rpt_tenant_requests_total")
                           .Help("With --api-keys: finished calls by tenant (_none: no listed "
                                 "key) and gRPC status code")
                           .Register(*registry_)),
      tenant_characters_(BuildCounter()
                             .Name("rpt_tenant_characters_total")
                             .Help("With --api-keys: characters charged to each tenant's quota")
                             .Register(*registry_)),
      tenant_queue_seconds_(BuildHistogram()
                                .Name("rpt_tenant_queue_duration_seconds")
                                .Help("With --api-keys: time a tenant's sentence waited in the "
                                      "admission queue (its fair share, server/fair_queue.h)")
                                .Register(*registry_)),
      tenant_queue_refusals_(BuildCounter()
                                 .Name("rpt_tenant_queue_refusals_total")
                                 .Help("With --api-keys: a tenant's calls the admission queue "
                                       "refused, by bound: share (past the tenant's share while "
                                       "others wait) or queue (the queue's bounds)")
                                 .Register(*registry_)),
      queue_seconds_(BuildHistogram()
                         .Name("rpt_queue_duration_seconds")
                         .Help("Time a sentence waited in the admission queue")
                         .Register(*registry_)),
      encode_seconds_(BuildHistogram()
                          .Name("rpt_encode_duration_seconds")
                          .Help("Encoder time per batch of newly admitted sentences")
                          .Register(*registry_)),
      decode_step_seconds_(BuildHistogram()
                               .Name("rpt_decode_step_duration_seconds")
                               .Help("Time of one decoder step over all active rows")
                               .Register(*registry_)),
      deliver_seconds_(BuildHistogram()
                           .Name("rpt_deliver_duration_seconds")
                           .Help("Time the hand-over thread spent on one finished sentence: "
                                 "span restoration, detokenizing, handing the result to its call")
                           .Register(*registry_)),
      active_rows_per_step_(BuildHistogram()
                                .Name("rpt_decode_step_rows")
                                .Help("Decoder rows (sentences x alive beams) per step")
                                .Register(*registry_)),
      source_tokens_(BuildCounter()
                         .Name("rpt_source_tokens_total")
                         .Help("Source tokens of translated sentences")
                         .Register(*registry_)),
      target_tokens_(BuildCounter()
                         .Name("rpt_target_tokens_total")
                         .Help("Target tokens of the best hypotheses returned")
                         .Register(*registry_)),
      protected_spans_(BuildCounter()
                           .Name("rpt_protected_spans_total")
                           .Help("Placeholders, tags, entities and escapes protected in sources "
                                 "(docs/protected-spans.md)")
                           .Register(*registry_)),
      spans_lost_(BuildCounter()
                      .Name("rpt_spans_lost_total")
                      .Help("Translations returned without every protected span of their "
                            "source (max_length too short for them)")
                      .Register(*registry_)),
      glossary_terms_(BuildCounter()
                          .Name("rpt_glossary_terms_total")
                          .Help("Glossary terms matched in translated sources, by outcome: "
                                "kept (the best translation holds the target) or missed")
                          .Register(*registry_)),
      glossary_entries_(BuildGauge()
                            .Name("rpt_glossary_entries")
                            .Help("Entries of each named glossary (--glossary), per model")
                            .Register(*registry_)),
      retried_sentences_(BuildCounter()
                             .Name("rpt_retried_sentences_total")
                             .Help("Sentences requeued after a failed encoding or decoder step "
                                   "(e.g. the memory limit), to run in smaller groups")
                             .Register(*registry_)),
      queued_sentences_(BuildGauge()
                            .Name("rpt_queue_depth_sentences")
                            .Help("Sentences waiting in the admission queue")
                            .Register(*registry_)),
      queued_tokens_(BuildGauge()
                         .Name("rpt_queue_depth_tokens")
                         .Help("Source tokens waiting in the admission queue")
                         .Register(*registry_)),
      active_rows_(BuildGauge()
                       .Name("rpt_active_rows")
                       .Help("Decoder rows the next step will run")
                       .Register(*registry_)),
      active_sentences_(BuildGauge()
                            .Name("rpt_active_sentences")
                            .Help("Sentences currently decoding")
                            .Register(*registry_)),
      device_memory_(BuildGauge()
                         .Name("rpt_device_memory_bytes")
                         .Help("Device memory held, by model, device and use")
                         .Register(*registry_)),
      model_info_(BuildGauge()
                      .Name("rpt_model_info")
                      .Help("Loaded models (value 1) with their languages, device and dtype")
                      .Register(*registry_)),
      cpu_kernels_info_(BuildGauge()
                            .Name("rpt_cpu_kernels_info")
                            .Help("The CPU's vector extensions and the kernels chosen for them "
                                  "(value 1)")
                            .Register(*registry_)),
      cache_hits_(prometheus::BuildCounter()
                      .Name("rpt_cache_hits_total")
                      .Help("Sentences answered from the translation cache")
                      .Register(*registry_)),
      cache_misses_(prometheus::BuildCounter()
                        .Name("rpt_cache_misses_total")
                        .Help("Sentences looked up in the translation cache and decoded")
                        .Register(*registry_)),
      cache_evictions_(prometheus::BuildCounter()
                           .Name("rpt_cache_evictions_total")
                           .Help("Translation cache entries evicted to stay within --cache-size")
                           .Register(*registry_)),
      cache_bytes_(prometheus::BuildGauge()
                       .Name("rpt_cache_bytes")
                       .Help("Estimated heap bytes of the translation cache's entries")
                       .Register(*registry_)),
      cache_entries_(prometheus::BuildGauge()
                         .Name("rpt_cache_entries")
                         .Help("Sentences in the translation cache")
                         .Register(*registry_)) {}

CacheMetrics Metrics::add_cache(const std::string& model) {
  const prometheus::Labels labels{{"model", model}};
  return {.hits = &cache_hits_.Add(labels),
          .misses = &cache_misses_.Add(labels),
          .evictions = &cache_evictions_.Add(labels),
          .bytes = &cache_bytes_.Add(labels),
          .entries = &cache_entries_.Add(labels)};
}

void Metrics::set_cpu_kernels(const kernels::CpuKernels& kernels) {
  cpu_kernels_info_
      .Add({{"isa", kernels.isa},
            {"float32", kernels.float32},
            {"float32_linear", kernels.float32_linear},
            {"int8", kernels.int8}})
      .Set(1);
}

std::string Metrics::render() const {
  return prometheus::TextSerializer().Serialize(registry_->Collect());
}

ModelMetrics Metrics::add_model(const ModelDescription& model) {
  model_info_
      .Add({{"model", model.name},
            {"source_language", model.source_language},
            {"target_language", model.target_language},
            {"device", model.device},
            {"dtype", model.dtype},
            {"position_type", model.position_type}})
      .Set(1);
  device_memory_.Add({{"model", model.name}, {"device", model.device}, {"use", "weights"}})
      .Set(model.weights_bytes);
  const prometheus::Labels labels{{"model", model.name}};
  ModelMetrics m;
  m.decoder_memory_bytes =
      &device_memory_.Add({{"model", model.name}, {"device", model.device}, {"use", "decoder"}});
  m.queue_seconds = &queue_seconds_.Add(labels, latency_buckets());
  m.encode_seconds = &encode_seconds_.Add(labels, step_buckets());
  m.decode_step_seconds = &decode_step_seconds_.Add(labels, step_buckets());
  m.deliver_seconds = &deliver_seconds_.Add(labels, step_buckets());
  m.active_rows_per_step = &active_rows_per_step_.Add(labels, row_buckets());
  m.source_tokens = &source_tokens_.Add(labels);
  m.target_tokens = &target_tokens_.Add(labels);
  m.protected_spans = &protected_spans_.Add(labels);
  m.spans_lost = &spans_lost_.Add(labels);
  m.glossary_terms_kept = &glossary_terms_.Add({{"model", model.name}, {"outcome", "kept"}});
  m.glossary_terms_missed = &glossary_terms_.Add({{"model", model.name}, {"outcome", "missed"}});
  m.retried_sentences = &retried_sentences_.Add(labels);
  m.queued_sentences = &queued_sentences_.Add(labels);
  m.queued_tokens = &queued_tokens_.Add(labels);
  m.active_rows = &active_rows_.Add(labels);
  m.active_sentences = &active_sentences_.Add(labels);
  m.tenants = {.queue_seconds = &tenant_queue_seconds_, .refusals = &tenant_queue_refusals_};
  return m;
}

prometheus::Histogram* TenantQueueMetrics::wait_seconds(const std::string& tenant) const {
  if (queue_seconds == nullptr) return nullptr;
  return &queue_seconds->Add({{"tenant", tenant}}, latency_buckets());
}

void TenantQueueMetrics::count_refusal(const std::string& tenant, std::string_view bound) const {
  if (refusals == nullptr) return;
  refusals->Add({{"tenant", tenant}, {"bound", std::string(bound)}}).Increment();
}

void Metrics::add_glossary(const std::string& model, const std::string& glossary, int entries) {
  glossary_entries_.Add({{"model", model}, {"glossary", glossary}}).Set(entries);
}

void Metrics::record_request(const CallLabels& call, std::string_view code, double seconds) {
  requests_
      .Add({{"model", call.model.empty() ? "_none" : call.model},
            {"method", call.method},
            {"protocol", call.protocol},
            {"code", std::string(code)}})
      .Increment();
  if (call.model.empty()) return;
  request_seconds_
      .Add({{"model", call.model}, {"method", call.method}, {"protocol", call.protocol}},
           latency_buckets())
      .Observe(seconds);
}

void Metrics::record_tenant_call(const std::string& tenant, std::string_view code,
                                 std::int64_t characters) {
  tenant_requests_.Add({{"tenant", tenant}, {"code", std::string(code)}}).Increment();
  if (characters > 0) {
    tenant_characters_.Add({{"tenant", tenant}}).Increment(static_cast<double>(characters));
  }
}

}  // namespace rpt::server
