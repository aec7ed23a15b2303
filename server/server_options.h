// Everything rpt-server can be told, with documented defaults, and its command line (CLI11 flags,
// also readable from a TOML/INI config file given with --config).
#pragma once

#include <string>
#include <vector>

#include "common/default_ports.h"
#include "engine/beam_search.h"
#include "flags/shared_flags.h"

// CLI11 is heavy to parse: declared here, included where the flags are added.
namespace CLI {
class App;
}  // namespace CLI

namespace rpt::server {

struct ModelSpec {
  std::string name;       // routing name
  std::string directory;  // model directory (docs/model-format.md)
  // --model-compute-type NAME=TYPE, else --compute-type (filled by finalize_server_options).
  kernels::Precision precision = kernels::Precision::kFloat32;
};

// Limits of one model's scheduler (docs/engine.md "Step-level (in-flight) batching").
struct SchedulerOptions {
  // Admission queue bounds: a request that would push the queue past either gets
  // RESOURCE_EXHAUSTED at once; one larger than a bound on its own, INVALID_ARGUMENT.
  int max_queued_sentences = 4096;  // segments: the largest request the limits admit
  long max_queued_tokens = 262144;  // source tokens
  // Per decoder step: sentences decoding together, and their budget of source tokens x beam
  // (the size of the cross-attention work and memory). A lone sentence over the budget still runs.
  int max_active_sentences = 64;
  long max_batch_tokens = 16384;
  // In-flight (step-level) batching admits queued sentences at every step, into rows that
  // finished sentences freed. Off, a batch is admitted only when the decoder is empty and runs
  // until its last sentence ends (static batching): for measuring what in-flight batching buys.
  bool inflight_batching = true;
  // Queued sentences join a decoding batch once this many can (TranslatorOptions::admission_group;
  // 0: the device's measured best).
  int admission_group = 0;
};

// Request validation limits and defaults.
struct RequestLimits {
  int max_texts_per_request = 256;
  long max_text_bytes = 1L << 20;       // per text: about 150,000 words of English
  int max_segments_per_request = 4096;  // segments of all the texts of a call
  int max_input_length = 1024;  // source tokens per segment; a longer one is cut (segmenter.h)
  int max_beam_size = 16;
  int max_decoding_length = 1024;  // cap on DecodingOptions.max_length
};

// --glossary [MODEL:]NAME=FILE: a named glossary (engine/glossary.h) for one model or all.
struct GlossarySpec {
  std::string model;  // empty: every model
  std::string name;
  std::string path;
};

struct ServerOptions {
  std::vector<ModelSpec> models;
  std::vector<std::string> glossary_flags;  // --glossary as given, parsed into glossaries by
                                            // finalize_server_options
  std::vector<GlossarySpec> glossaries;
  // --model-compute-type NAME=TYPE pairs, folded into models[].precision by
  // finalize_server_options.
  std::vector<std::pair<std::string, std::string>> model_compute_types;
  std::string listen = "0.0.0.0:50051";
  std::string metrics_listen;           // derived from metrics_port and the listen host
  int metrics_port = kDefaultHttpPort;  // 0: any free port (see ready_file)
  // The HTTP port (metrics_port: probes, /metrics, the JSON API): larger request bodies get 413.
  long http_max_body_bytes = 16L << 20;
  // "HOST:PORT" of the translation APIs' own HTTP port (HTTPS with tls_cert/tls_key); empty:
  // they stay on the metrics port. Port 0: any free port (ready_file says which).
  std::string http_listen;
  std::vector<std::string> cors_origins;  // HttpApiOptions::cors_origins
  bool web_ui = true;                     // HttpApiOptions::web_ui; false: --no-web-ui
  // The engine flags (flags/shared_flags.h). memory_limit_mib is per model; below 0 (the
  // default): on the CPU half the memory available to the process split among the models, on a
  // GPU no limit but the device's.
  flags::ComputeFlags compute{.memory_limit_mib = -1};
  SchedulerOptions scheduler;
  RequestLimits limits;
  DecodingOptions default_decoding{.beam_size = 4, .n_best = 1, .max_length = 250};
  // Segmentation when a request does not say (DecodingOptions.split_sentences), and how glossary
  // terms are enforced.
  flags::TextFlags text;
  std::string api_keys_file;  // --api-keys (server/api_keys.h); empty: no keys asked
  // --admin-key-file: the key the admin API (server/admin_api.h) asks for; empty: the admin API
  // refuses every call.
  std::string admin_key_file;
  // --glossary-dir: where the admin API keeps named glossaries (server/glossary_store.h); empty:
  // they last until the process ends.
  std::string glossary_dir;
  // --watch-files: every this many seconds, --api-keys, --admin-key-file and the --glossary files
  // are reread when their contents changed, as on SIGHUP (mounted Secrets and ConfigMaps change
  // without a signal); 0: only on SIGHUP.
  double watch_files_seconds = 0;
  std::string tls_cert;  // PEM files; both or neither
  std::string tls_key;
  std::string log_level = "info";
  bool log_json = false;
  double grace_period_seconds = 30.0;
  // Per model, the exact translation cache's bound (server/translation_cache.h); 0: off.
  double cache_size_mib = 64;
  // A client connection older than this gets GOAWAY and reconnects (re-resolving DNS, so
  // long-lived clients spread over replicas added since); its calls in flight then have the
  // grace to finish. 0: connections live as long as clients keep them.
  double max_connection_age_seconds = 0.0;
  double max_connection_age_grace_seconds = 30.0;
  // When set, {"grpc_port": P, "metrics_port": M, "http_port": H} is written here once serving
  // (tests, scripts; http_port only with http_listen).
  std::string ready_file;
};

// Registers every flag of `options` on `app` (including --config).
void add_server_options(CLI::App& app, ServerOptions& options);
// Checks cross-field constraints and fills derived fields after parsing; throws
// std::invalid_argument with a message for the user. Returns warnings about settings that work
// but refuse some requests the limits admit (for the log).
std::vector<std::string> finalize_server_options(ServerOptions& options);

}  // namespace rpt::server
