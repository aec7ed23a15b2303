#include "server/server_options.h"

#include <algorithm>
#include <stdexcept>

#include <CLI/CLI.hpp>

#include "engine/errors.h"

namespace rpt::server {
namespace {

ModelSpec parse_model_spec(const std::string& text) {
  const auto equals = text.find('=');
  if (equals == std::string::npos) {
    // A bare directory: the model is named after the directory's last component.
    std::string trimmed = text;
    while (trimmed.size() > 1 && trimmed.back() == '/') trimmed.pop_back();
    const auto slash = trimmed.rfind('/');
    return {slash == std::string::npos ? trimmed : trimmed.substr(slash + 1), text};
  }
  return {text.substr(0, equals), text.substr(equals + 1)};
}

GlossarySpec parse_glossary_spec(const std::string& text) {
  const auto equals = text.find('=');
  if (equals == std::string::npos || equals + 1 == text.size()) {
    throw std::invalid_argument("--glossary wants [MODEL:]NAME=FILE, got '" + text + "'");
  }
  GlossarySpec spec{"", text.substr(0, equals), text.substr(equals + 1)};
  const auto colon = spec.name.find(':');
  if (colon != std::string::npos) {
    spec.model = spec.name.substr(0, colon);
    spec.name = spec.name.substr(colon + 1);
  }
  if (spec.name.empty() || (colon != std::string::npos && spec.model.empty())) {
    throw std::invalid_argument("--glossary wants [MODEL:]NAME=FILE, got '" + text + "'");
  }
  return spec;
}

}  // namespace

void add_server_options(CLI::App& app, ServerOptions& options) {
  app.set_config("--config", "", "TOML or INI file with any of these options (flags win)");
  app.add_option_function<std::vector<std::string>>(
         "--model",
         [&options](const std::vector<std::string>& specs) {
           for (const auto& spec : specs) options.models.push_back(parse_model_spec(spec));
         },
         "NAME=DIR (repeatable); DIR alone names the model after the directory")
      ->required()
      ->take_all();
  app.add_option_function<std::vector<std::string>>(
         "--glossary",
         [&options](const std::vector<std::string>& specs) {
           for (const auto& spec : specs) options.glossary_flags.push_back(spec);
         },
         "[MODEL:]NAME=FILE (repeatable): a glossary TSV (source<TAB>target a line, # comments; "
         "docs/glossaries.md) that requests name with glossary_name; for MODEL only, else for "
         "every model")
      ->take_all();
  app.add_option("--listen", options.listen, "gRPC address HOST:PORT (port 0: any free port)")
      ->capture_default_str();
  app.add_option("--metrics-port", options.metrics_port,
                 "HTTP port on the listen host: /metrics, /healthz, /readyz and the JSON API "
                 "(/v1/translate, /v1/models); 0: any free port")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  app.add_option("--http-max-body-bytes", options.http_max_body_bytes,
                 "Largest request body the HTTP port takes; larger ones get 413 (a JSON body "
                 "also nests objects and arrays at most 32 levels deep, else 400)")
      ->check(CLI::Range(1024L, 1L << 30))
      ->capture_default_str();
  flags::add_compute_flags(app, options.compute,
                           "Default: on the CPU half the memory available to the process (RAM or "
                           "cgroup limit) split among the models, on a GPU no limit but the "
                           "device's");
  app.add_option_function<std::vector<std::string>>(
         "--model-compute-type",
         [&options](const std::vector<std::string>& specs) {
           for (const auto& spec : specs) {
             const auto equals = spec.find('=');
             if (equals == std::string::npos) {
               throw CLI::ValidationError("--model-compute-type",
                                          "wants NAME=TYPE, got '" + spec + "'");
             }
             options.model_compute_types.emplace_back(spec.substr(0, equals),
                                                      spec.substr(equals + 1));
           }
         },
         "NAME=TYPE (repeatable): one model's compute type instead of --compute-type, e.g. "
         "en-de=int8")
      ->take_all();
  auto& s = options.scheduler;
  app.add_option("--max-queued-sentences", s.max_queued_sentences,
                 "Admission queue bound per model, in sentences")
      ->check(CLI::Range(1, 1 << 24))
      ->capture_default_str();
  app.add_option("--max-queued-tokens", s.max_queued_tokens,
                 "Admission queue bound per model, in source tokens")
      ->check(CLI::Range(1L, 1L << 40))
      ->capture_default_str();
  app.add_option("--max-active-sentences", s.max_active_sentences,
                 "Sentences decoded together per step")
      ->check(CLI::Range(1, 1 << 16))
      ->capture_default_str();
  app.add_option("--max-batch-tokens", s.max_batch_tokens,
                 "Per-step budget of source tokens x beam over the active sentences")
      ->check(CLI::Range(1L, 1L << 40))
      ->capture_default_str();
  app.add_option_function<std::string>(
         "--batching", [&s](const std::string& mode) { s.inflight_batching = mode == "inflight"; },
         "inflight: queued sentences join the decoder at every step (default); static: a batch "
         "is admitted only when the decoder is empty and runs to its last sentence (to measure "
         "what in-flight batching buys)")
      ->check(CLI::IsMember({"inflight", "static"}))
      ->default_str("inflight");
  auto& l = options.limits;
  flags::add_batching_flags(app, l.max_input_length, s.admission_group);
  app.add_option("--max-texts-per-request", l.max_texts_per_request, "Texts per request")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  app.add_option("--max-text-bytes", l.max_text_bytes, "Longest text, in bytes of UTF-8")
      ->check(CLI::Range(1L, 1L << 30))
      ->capture_default_str();
  app.add_option("--max-segments-per-request", l.max_segments_per_request,
                 "Segments (sentences) of all the texts of a request")
      ->check(CLI::Range(1, 1 << 24))
      ->capture_default_str();
  app.add_option("--max-beam-size", l.max_beam_size, "Largest beam a request may ask for")
      ->check(CLI::Range(1, kMaxBeamSize))
      ->capture_default_str();
  app.add_option("--max-decoding-length", l.max_decoding_length,
                 "Largest max_length a request may ask for")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  flags::add_decoding_flags(app, options.default_decoding);
  flags::add_text_flags(app, options.text);
  app.add_option("--http-listen", options.http_listen,
                 "HOST:PORT of a port of their own for the translation APIs (/v1/translate, "
                 "/v1/models, LibreTranslate's, DeepL's), HTTPS with --tls-cert/--tls-key; the "
                 "--metrics-port then answers the probes and /metrics only (default: the APIs "
                 "are on --metrics-port, plain HTTP)");
  app.add_option("--cors-origins", options.cors_origins,
                 "Origins whose web pages may call the translation APIs from a browser (CORS), "
                 "comma-separated: https://app.example, or * for any (default: none)")
      ->delimiter(',');
  app.add_flag_callback(
      "--no-web-ui", [&options] { options.web_ui = false; },
      "Do not serve the translation page for browsers (GET / on the port of the translation "
      "APIs; docs/compatible-apis.md); / then answers 404");
  // Read at start, not checked as flags (CLI11's ExistingFile fails as a bad flag, 2): a missing
  // or unreadable file stops the server with 1 naming it, as the models and TLS files do.
  app.add_option("--api-keys", options.api_keys_file,
                 "YAML file of tenants: their API keys, models, rate limits and monthly "
                 "quotas (docs/server.md, \"API keys and tenants\"; SIGHUP reloads it). Every "
                 "translation call must present a listed key (Authorization: Bearer KEY; "
                 "LibreTranslate's api_key; DeepL's DeepL-Auth-Key) (default: no keys asked)");
  app.add_option("--admin-key-file", options.admin_key_file,
                 "File holding the key (its first line, at least 16 characters) the admin API "
                 "asks for (Authorization: Bearer KEY) on the --metrics-port: load, replace and "
                 "unload models, put and delete named glossaries (docs/server.md, \"Admin "
                 "API\"); SIGHUP rereads it (default: the admin API refuses every call)");
  app.add_option("--watch-files", options.watch_files_seconds,
                 "Every this many seconds, reread --api-keys, --admin-key-file and the --glossary "
                 "files whose contents changed, as SIGHUP does (a mounted Kubernetes Secret or "
                 "ConfigMap changes without a signal); 0: only on SIGHUP")
      ->check(CLI::Range(0.0, 86400.0))
      ->capture_default_str();
  app.add_option("--glossary-dir", options.glossary_dir,
                 "Directory where the admin API keeps the named glossaries it is given, served "
                 "again after a restart (default: they last until the process ends)");
  // Files read at start: one that is missing stops the server with 1, as a bad pair does.
  app.add_option("--tls-cert", options.tls_cert, "PEM certificate chain (with --tls-key)");
  app.add_option("--tls-key", options.tls_key, "PEM private key (with --tls-cert)");
  app.add_option("--log-level", options.log_level, "trace, debug, info, warn, error, off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}))
      ->capture_default_str();
  app.add_flag("--log-json", options.log_json, "One JSON object per log line");
  app.add_option("--cache-size", options.cache_size_mib,
                 "MiB per model for the exact translation cache (repeated texts with the same "
                 "options are answered from it, identical to a fresh decode); 0: off")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  app.add_option("--grace-period", options.grace_period_seconds,
                 "Seconds in-flight calls may take to finish after SIGTERM/SIGINT")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  app.add_option("--max-connection-age", options.max_connection_age_seconds,
                 "Seconds before a client connection is closed with GOAWAY (the client "
                 "reconnects and rebalances; gRPC adds +-10% jitter); 0: never")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  app.add_option("--max-connection-age-grace", options.max_connection_age_grace_seconds,
                 "Seconds the calls in flight on such a connection may still take")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  app.add_option("--ready-file", options.ready_file,
                 "Write {\"grpc_port\", \"metrics_port\"} as JSON here once serving");
}

std::vector<std::string> finalize_server_options(ServerOptions& options) {
  // Not a structured binding: clang 14 (the fuzzing and sanitizer build) cannot capture one.
  for (const auto& entry : options.model_compute_types) {
    const std::string& name = entry.first;
    if (std::none_of(options.models.begin(), options.models.end(),
                     [&name](const ModelSpec& spec) { return spec.name == name; })) {
      throw std::invalid_argument("--model-compute-type names no --model: '" + name + "'");
    }
  }
  for (ModelSpec& spec : options.models) {
    spec.precision = options.compute.precision;
    for (const auto& entry : options.model_compute_types) {
      if (entry.first != spec.name) continue;
      try {
        spec.precision = parse_precision(entry.second);
      } catch (const Error& error) {
        throw std::invalid_argument("--model-compute-type " + entry.first + "=" + entry.second +
                                    ": " + error.message());
      }
    }
    const kernels::Precision precision = spec.precision;
    const std::string flag = "--compute-type " + std::string(kernels::precision_name(precision)) +
                             " (model " + spec.name + ")";
    const bool on_cpu = options.compute.device == Device::kCpu;
    if (on_cpu &&
        (precision == kernels::Precision::kFloat16 || precision == kernels::Precision::kBFloat16)) {
      throw std::invalid_argument(flag +
                                  " needs --device cuda (the CPU computes in float32 "
                                  "or int8)");
    }
    if (!on_cpu && precision == kernels::Precision::kInt8) {
      throw std::invalid_argument(flag + " needs --device cpu (there is no CUDA int8 path yet)");
    }
  }
  if (options.tls_cert.empty() != options.tls_key.empty()) {
    throw std::invalid_argument("--tls-cert and --tls-key go together");
  }
  if (options.scheduler.admission_group > options.scheduler.max_active_sentences) {
    throw std::invalid_argument("--admission-group must not exceed --max-active-sentences");
  }
  for (std::size_t i = 0; i < options.models.size(); ++i) {
    const ModelSpec& spec = options.models[i];
    if (spec.name.empty() || spec.directory.empty()) {
      throw std::invalid_argument("--model wants NAME=DIR, got '" + spec.name + "=" +
                                  spec.directory + "'");
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (options.models[j].name == spec.name) {
        throw std::invalid_argument("model name '" + spec.name + "' is given twice");
      }
    }
  }
  options.glossaries.clear();
  for (const std::string& flag : options.glossary_flags) {
    options.glossaries.push_back(parse_glossary_spec(flag));
  }
  for (std::size_t i = 0; i < options.glossaries.size(); ++i) {
    const GlossarySpec& spec = options.glossaries[i];
    if (!spec.model.empty() &&
        std::none_of(options.models.begin(), options.models.end(),
                     [&spec](const ModelSpec& model) { return model.name == spec.model; })) {
      throw std::invalid_argument("--glossary names no --model: '" + spec.model + "'");
    }
    for (std::size_t j = 0; j < i; ++j) {
      const GlossarySpec& other = options.glossaries[j];
      const bool overlap = spec.model.empty() || other.model.empty() || spec.model == other.model;
      if (other.name == spec.name && overlap) {
        throw std::invalid_argument("glossary name '" + spec.name + "' is given twice" +
                                    (spec.model.empty() ? "" : " for model " + spec.model));
      }
    }
  }
  const auto colon = options.listen.rfind(':');
  if (colon == std::string::npos) {
    throw std::invalid_argument("--listen wants HOST:PORT, got '" + options.listen + "'");
  }
  options.metrics_listen =
      options.listen.substr(0, colon) + ":" + std::to_string(options.metrics_port);
  auto& d = options.default_decoding;
  if (d.n_best > d.beam_size) throw std::invalid_argument("--n-best must be <= --beam-size");
  if (d.beam_size > options.limits.max_beam_size) {
    throw std::invalid_argument("--beam-size must be <= --max-beam-size");
  }
  if (d.max_length > options.limits.max_decoding_length) {
    throw std::invalid_argument("--max-length must be <= --max-decoding-length");
  }
  // A request larger than a queue bound is refused with INVALID_ARGUMENT (it could never be
  // admitted); say so at start where the request limits let such requests through.
  std::vector<std::string> warnings;
  const auto& limits = options.limits;
  const auto& queue = options.scheduler;
  if (limits.max_segments_per_request > queue.max_queued_sentences) {
    warnings.push_back("--max-segments-per-request " +
                       std::to_string(limits.max_segments_per_request) +
                       " > --max-queued-sentences " + std::to_string(queue.max_queued_sentences) +
                       ": larger requests will be refused");
  }
  if (limits.max_input_length > queue.max_queued_tokens) {
    warnings.push_back("--max-input-length " + std::to_string(limits.max_input_length) +
                       " > --max-queued-tokens " + std::to_string(queue.max_queued_tokens) +
                       ": the longest segments will be refused");
  }
  return warnings;
}

}  // namespace rpt::server
