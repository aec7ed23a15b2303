#include "server/server.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>
#include <spdlog/spdlog.h>

#include "kernels/cpu_kernels.h"
#include "kernels/parallel.h"

namespace rpt::server {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::shared_ptr<grpc::ServerCredentials> credentials(const ServerOptions& options) {
  if (options.tls_cert.empty()) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions ssl;
  ssl.pem_key_cert_pairs.push_back({read_file(options.tls_key), read_file(options.tls_cert)});
  return grpc::SslServerCredentials(ssl);
}

constexpr const char* kTranslatorService = "rpt.v1.Translator";

// The tenants for the log: their names and key labels, never a key.
std::string describe_tenants(const ApiKeys& keys) {
  std::string text;
  for (const TenantSpec& tenant : keys.tenants()) {
    text += (text.empty() ? "" : "; ") + tenant.name + " (";
    for (std::size_t i = 0; i < tenant.keys.size(); ++i) {
      text += (i == 0 ? "" : ", ") + key_label(tenant.keys[i]);
    }
    text += ")";
  }
  return text;
}

}  // namespace

Server::Server(const ServerOptions& options)
    : options_(options),
      registry_((kernels::set_cpu_threads(options.compute.threads), options), metrics_),
      context_{
          .registry = registry_, .metrics = metrics_, .options = options_, .api_keys = api_keys_},
      service_(context_),
      health_({kTranslatorService}),
      http_api_(context_, [this] { return serving_.load(); },
                {.admin = true,
                 .public_apis = options.http_listen.empty(),
                 .cors_origins = options.cors_origins,
                 .web_ui = options.web_ui}),
      public_api_(context_, [this] { return serving_.load(); },
                  {.admin = false,
                   .public_apis = true,
                   .cors_origins = options.cors_origins,
                   .web_ui = options.web_ui}) {
  if (!options.admin_key_file.empty()) {
    http_api_.admin()->load_key(options.admin_key_file);  // throws naming the file
    spdlog::info("admin API on the metrics port (--admin-key-file {})", options.admin_key_file);
  }
  if (!options.api_keys_file.empty()) {
    api_keys_.load(options.api_keys_file);  // throws naming the file's line
    spdlog::info("--api-keys {}: {}", options.api_keys_file, describe_tenants(api_keys_));
    warn_of_unserved_models();
  }
  const auto max_body = static_cast<std::size_t>(options.http_max_body_bytes);
  http_ = std::make_unique<HttpServer>(
      HttpServerOptions{.address = options.metrics_listen, .max_body_bytes = max_body},
      [this](HttpRequest request, HttpResponder respond) {
        http_api_.handle(std::move(request), std::move(respond));
      });
  if (!options.http_listen.empty()) {
    HttpServerOptions public_port{.address = options.http_listen, .max_body_bytes = max_body};
    if (!options.tls_cert.empty()) {
      public_port.tls_cert_pem = read_file(options.tls_cert);
      public_port.tls_key_pem = read_file(options.tls_key);
    }
    public_http_ = std::make_unique<HttpServer>(
        public_port, [this](HttpRequest request, HttpResponder respond) {
          public_api_.handle(std::move(request), std::move(respond));
        });
  }

  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(options.listen, credentials(options), &grpc_port_);
  builder.RegisterService(&service_);
  builder.RegisterService(&health_);
  builder.SetMaxReceiveMessageSize(16 << 20);
  if (options.max_connection_age_seconds > 0) {
    builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_MS,
                               static_cast<int>(options.max_connection_age_seconds * 1e3));
    builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS,
                               static_cast<int>(options.max_connection_age_grace_seconds * 1e3));
  }
  server_ = builder.BuildAndStart();
  if (server_ == nullptr || grpc_port_ == 0) {
    // gRPC only logs why (above); with TLS the usual cause is a bad PEM file or a key that does
    // not belong to the certificate, which "cannot listen" alone would hide.
    throw std::runtime_error("cannot listen on " + options.listen +
                             (options.tls_cert.empty()
                                  ? std::string()
                                  : " with TLS: is --tls-cert " + options.tls_cert +
                                        " a PEM certificate chain and --tls-key " +
                                        options.tls_key +
                                        " its PEM private key? (gRPC's reason is logged above)"));
  }
  health_.set_serving(true);
  serving_.store(true);
  const kernels::CpuKernels& cpu_kernels = kernels::cpu_kernels();
  spdlog::info("CPU kernels: {}", cpu_kernels.summary());
  metrics_.set_cpu_kernels(cpu_kernels);
  if (public_http_ == nullptr) {
    spdlog::info(
        "serving {} model(s) on port {} ({}), HTTP (probes, metrics, JSON APIs) on port {}",
        registry_.models().size(), grpc_port_, options.tls_cert.empty() ? "plaintext" : "TLS",
        http_->port());
  } else {
    spdlog::info(
        "serving {} model(s) on port {} ({}), JSON APIs on port {} ({}), probes and metrics on "
        "port {}",
        registry_.models().size(), grpc_port_, options.tls_cert.empty() ? "plaintext" : "TLS",
        public_http_->port(), options.tls_cert.empty() ? "HTTP" : "HTTPS", http_->port());
  }
  if (options.watch_files_seconds > 0) {
    std::vector<std::string> files;
    if (!options.api_keys_file.empty()) files.push_back(options.api_keys_file);
    if (!options.admin_key_file.empty()) files.push_back(options.admin_key_file);
    for (const GlossarySpec& spec : options.glossaries) files.push_back(spec.path);
    if (!files.empty()) {
      file_watcher_ = std::make_unique<FileWatcher>(
          files, std::chrono::milliseconds(static_cast<long>(options.watch_files_seconds * 1000.0)),
          [this] { reload_files(); });
    }
  }
  write_ready_file();
}

Server::~Server() {
  if (server_ != nullptr) {
    registry_.stop();
    health_.finish_watches();
    server_->Shutdown(std::chrono::system_clock::now());
  }
}

void Server::reload_files() {
  const std::lock_guard lock(reload_mutex_);
  if (!options_.admin_key_file.empty()) {
    try {
      http_api_.admin()->load_key(options_.admin_key_file);
      spdlog::info("reload: --admin-key-file {} reread", options_.admin_key_file);
    } catch (const std::exception& error) {
      spdlog::error("reload: --admin-key-file not reread, the old key stays: {}", error.what());
    }
  }
  reload_glossaries();
  reload_api_keys();
}

void Server::reload_glossaries() {
  for (const GlossarySpec& spec : options_.glossaries) {
    try {
      auto glossary = std::make_shared<const Glossary>(Glossary::load(spec.path));
      const RequestStatus put = registry_.put_glossary(spec.model, spec.name, glossary);
      if (!put.ok()) throw std::runtime_error(put.message);
      spdlog::info("reload: glossary {} ({} entries) from {}", spec.name, glossary->size(),
                   spec.path);
    } catch (const std::exception& error) {
      spdlog::error("reload: glossary {} from {} not reread, the old entries stay: {}", spec.name,
                    spec.path, error.what());
    }
  }
}

void Server::reload_api_keys() {
  if (options_.api_keys_file.empty()) {
    spdlog::debug("reload: no --api-keys file to reread");
    return;
  }
  const ApiKeys::Reload reload = api_keys_.reload();
  if (!reload.ok) {
    spdlog::error("reload: --api-keys {} not reloaded: {}", options_.api_keys_file, reload.message);
    return;
  }
  spdlog::info("reload: --api-keys {} reloaded: {}", options_.api_keys_file, reload.message);
  warn_of_unserved_models();
}

void Server::warn_of_unserved_models() const {
  for (const TenantSpec& tenant : api_keys_.tenants()) {
    if (!tenant.models.has_value()) continue;
    for (const std::string& model : *tenant.models) {
      const auto models = registry_.models();
      const bool served = std::any_of(models.begin(), models.end(),
                                      [&model](const auto& m) { return m->name == model; });
      if (!served) {
        spdlog::warn("--api-keys: tenant {} lists the model '{}', which this server does not serve",
                     tenant.name, model);
      }
    }
  }
}

void Server::write_ready_file() const {
  if (options_.ready_file.empty()) return;
  // Written to a temporary name and renamed, so a reader never sees half a file.
  const std::string temporary = options_.ready_file + ".tmp";
  {
    std::ofstream out(temporary);
    out << "{\"grpc_port\": " << grpc_port_ << ", \"metrics_port\": " << http_->port();
    if (public_http_ != nullptr) out << ", \"http_port\": " << public_http_->port();
    out << ", \"pid\": " << getpid() << "}\n";
  }
  std::rename(temporary.c_str(), options_.ready_file.c_str());
}

void Server::drain_and_stop() {
  using namespace std::chrono;
  const auto grace =
      duration_cast<steady_clock::duration>(duration<double>(options_.grace_period_seconds));
  const auto give_up = steady_clock::now() + grace;
  // /readyz and new calls see the drain no later than a health watcher does.
  serving_.store(false);
  context_.draining.store(true);
  health_.set_serving(false);
  // gRPC's Shutdown sends GOAWAY at once: clients stop sending here (round_robin clients pick
  // the other replicas; pick_first ones reconnect through their resolver) while the calls in
  // flight finish. Shutdown blocks until they have, so it runs beside the wait below; its own
  // deadline comes after ours, so that the calls still running at the end of the grace period
  // are finished by the models (UNAVAILABLE) rather than cut by gRPC.
  std::jthread goaway([this, grace] {  // joins on unwinding too
    server_->Shutdown(system_clock::now() + duration_cast<system_clock::duration>(grace) +
                      seconds(2));
  });
  spdlog::info(
      "draining: GOAWAY sent, health NOT_SERVING, new calls UNAVAILABLE, {} call(s) in "
      "flight, grace period {:.1f} s",
      context_.in_flight.load(), options_.grace_period_seconds);
  while (context_.in_flight.load() > 0 && steady_clock::now() < give_up) {
    std::this_thread::sleep_for(milliseconds(5));
  }
  const int left = context_.in_flight.load();
  if (left > 0) {
    spdlog::warn("grace period over: {} call(s) still in flight end with UNAVAILABLE", left);
  }
  registry_.stop();  // finishes what is left
  // The health Watch streams are the only calls left: ending them lets Shutdown return now
  // instead of at its deadline.
  health_.finish_watches();
  goaway.join();
  server_->Wait();
  server_.reset();
  public_http_.reset();  // after every HTTP call has its answer; waits for them to be sent
  http_.reset();
  spdlog::info("stopped");
}

}  // namespace rpt::server
