// Prometheus metrics of the server (docs/server.md), kept with prometheus-cpp and served on
// the HTTP port (server/http_api.h). Names have the rpt_ prefix; times are in seconds.
//
// Thread safety: every method may be called from any thread (prometheus-cpp metrics are atomic;
// label lookups are guarded by the families).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "kernels/cpu_kernels.h"
#include "server/translation_cache.h"

namespace rpt::server {

// With --api-keys, what the schedulers' fair admission (server/fair_queue.h) records per tenant.
// Every model's scheduler shares the families; tenants are the keys file's names, so the series
// are bounded. Calls of no tenant (without --api-keys) are not recorded here.
struct TenantQueueMetrics {
  // rpt_tenant_queue_duration_seconds{tenant}
  prometheus::Family<prometheus::Histogram>* queue_seconds = nullptr;
  // rpt_tenant_queue_refusals_total{tenant, bound}
  prometheus::Family<prometheus::Counter>* refusals = nullptr;

  // The queue time histogram of `tenant` (nullptr when not registered). Resolving it allocates:
  // the scheduler keeps what it resolved.
  prometheus::Histogram* wait_seconds(const std::string& tenant) const;
  // A call of `tenant` refused by the admission queue, past `bound`: "share" (its share while
  // other tenants wait) or "queue" (the queue's bounds).
  void count_refusal(const std::string& tenant, std::string_view bound) const;
};

// The metrics one model's scheduler updates, resolved once for its label set.
struct ModelMetrics {
  prometheus::Histogram* queue_seconds = nullptr;        // per sentence, admission to encode
  prometheus::Histogram* encode_seconds = nullptr;       // per encoder batch
  prometheus::Histogram* decode_step_seconds = nullptr;  // per decoder step
  // Per finished sentence, on the hand-over thread: results made and handed to the call.
  prometheus::Histogram* deliver_seconds = nullptr;
  prometheus::Histogram* active_rows_per_step = nullptr;
  prometheus::Counter* source_tokens = nullptr;
  prometheus::Counter* target_tokens = nullptr;  // of the best hypotheses
  // Protected spans of translated sources, and best translations that did not keep all of theirs
  // (possible only when the span count leaves no room in max_length).
  prometheus::Counter* protected_spans = nullptr;
  prometheus::Counter* spans_lost = nullptr;
  // Glossary terms matched in translated sources, by whether the best translation holds the
  // target (missed only when max_length leaves no room for it).
  prometheus::Counter* glossary_terms_kept = nullptr;
  prometheus::Counter* glossary_terms_missed = nullptr;
  // Sentences put back in the queue after a failed encoding or step (e.g. the memory limit).
  prometheus::Counter* retried_sentences = nullptr;
  prometheus::Gauge* queued_sentences = nullptr;
  prometheus::Gauge* queued_tokens = nullptr;
  prometheus::Gauge* active_rows = nullptr;
  prometheus::Gauge* active_sentences = nullptr;
  // Memory of the decoder (KV cache, workspaces, encoder memory; on the CPU what the memory
  // limit counts).
  prometheus::Gauge* decoder_memory_bytes = nullptr;
  TenantQueueMetrics tenants;
};

struct ModelDescription {
  std::string name;
  std::string source_language;
  std::string target_language;
  std::string device;
  std::string dtype;
  std::string position_type;
  double weights_bytes = 0;
};

// Which calls a request metric counts.
struct CallLabels {
  std::string model;
  std::string method;    // "Translate", "TranslateStream", "ListModels"
  std::string protocol;  // "grpc" or "http"
};

class Metrics {
 public:
  Metrics();

  // The text exposition format of every metric (GET /metrics).
  std::string render() const;

  // Registers a model: rpt_model_info and device memory, and returns its scheduler metrics.
  ModelMetrics add_model(const ModelDescription& model);

  // The translation cache's counters and gauges for one model (rpt_cache_*{model}).
  CacheMetrics add_cache(const std::string& model);

  // rpt_glossary_entries{model, glossary}: a named glossary's entries.
  void add_glossary(const std::string& model, const std::string& glossary, int entries);

  // rpt_cpu_kernels_info{isa, float32, int8} 1: the kernels chosen for this CPU.
  void set_cpu_kernels(const kernels::CpuKernels& kernels);

  // One finished call: rpt_requests_total{model, method, protocol, code} and the end-to-end
  // histogram. A call of no model (empty: ListModels, a refusal before routing) is counted under
  // model="_none" and kept out of the histogram, whose series are per model: a series no call
  // ever feeds would put NaN into the latency recording rules (deploy/prometheus/rules.yml).
  void record_request(const CallLabels& call, std::string_view code, double seconds);

  // With --api-keys, one finished call of `tenant` (the keys file's name; "_none" when no listed
  // key came with it): rpt_tenant_requests_total{tenant, code} and, for the characters it was
  // charged, rpt_tenant_characters_total{tenant}. Tenants are the file's: bounded.
  void record_tenant_call(const std::string& tenant, std::string_view code,
                          std::int64_t characters);

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>& requests_;
  prometheus::Family<prometheus::Histogram>& request_seconds_;
  prometheus::Family<prometheus::Counter>& tenant_requests_;
  prometheus::Family<prometheus::Counter>& tenant_characters_;
  prometheus::Family<prometheus::Histogram>& tenant_queue_seconds_;
  prometheus::Family<prometheus::Counter>& tenant_queue_refusals_;
  prometheus::Family<prometheus::Histogram>& queue_seconds_;
  prometheus::Family<prometheus::Histogram>& encode_seconds_;
  prometheus::Family<prometheus::Histogram>& decode_step_seconds_;
  prometheus::Family<prometheus::Histogram>& deliver_seconds_;
  prometheus::Family<prometheus::Histogram>& active_rows_per_step_;
  prometheus::Family<prometheus::Counter>& source_tokens_;
  prometheus::Family<prometheus::Counter>& target_tokens_;
  prometheus::Family<prometheus::Counter>& protected_spans_;
  prometheus::Family<prometheus::Counter>& spans_lost_;
  prometheus::Family<prometheus::Counter>& glossary_terms_;
  prometheus::Family<prometheus::Gauge>& glossary_entries_;
  prometheus::Family<prometheus::Counter>& retried_sentences_;
  prometheus::Family<prometheus::Gauge>& queued_sentences_;
  prometheus::Family<prometheus::Gauge>& queued_tokens_;
  prometheus::Family<prometheus::Gauge>& active_rows_;
  prometheus::Family<prometheus::Gauge>& active_sentences_;
  prometheus::Family<prometheus::Gauge>& device_memory_;
  prometheus::Family<prometheus::Gauge>& model_info_;
  prometheus::Family<prometheus::Gauge>& cpu_kernels_info_;
  prometheus::Family<prometheus::Counter>& cache_hits_;
  prometheus::Family<prometheus::Counter>& cache_misses_;
  prometheus::Family<prometheus::Counter>& cache_evictions_;
  prometheus::Family<prometheus::Gauge>& cache_bytes_;
  prometheus::Family<prometheus::Gauge>& cache_entries_;
};

}  // namespace rpt::server
