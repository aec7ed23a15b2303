// Bookkeeping shared by every call, gRPC or HTTP: the in-flight count the drain waits for, and on
// completion the request metric and the one log line per call (id, model, sentences, tokens,
// latency, code).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include <grpcpp/server_context.h>

#include "server/metrics.h"
#include "server/api_keys.h"
#include "server/model_registry.h"
#include "server/server_options.h"
#include "server/status.h"

namespace rpt::v1 {
class ModelSelector;
class TranslateRequest;
}  // namespace rpt::v1

namespace rpt::server {

// State the handlers share with the server. Thread-safe.
struct ServiceContext {
  ModelRegistry& registry;
  Metrics& metrics;
  const ServerOptions& options;
  ApiKeys& api_keys;                  // --api-keys (none: every call admitted); SIGHUP reloads it
  std::atomic<bool> draining{false};  // new calls get UNAVAILABLE
  std::atomic<int> in_flight{0};      // calls started and not yet completed
  std::atomic<std::uint64_t> next_call_id{1};
};

// The `protocol` label of the rpt_ request metrics.
inline constexpr const char* kProtocolGrpc = "grpc";
inline constexpr const char* kProtocolHttp = "http";

// The key of the client's `authorization: Bearer <key>` metadata, or empty.
std::string bearer_token(const grpc::ServerContextBase& context);

// The client's x-request-id metadata, or empty.
std::string grpc_request_id(const grpc::ServerContextBase& context);

class CallRecord;

// Gives back what prepare_translation charged `api_key` for the call `record` counts
// (ApiKeys::refund), for a call that submit_translation then refused (a full admission queue): a
// refused call is charged nothing.
void refund_translation(ServiceContext& service, std::string_view api_key, CallRecord& record);

class CallRecord {
 public:
  // Counts the call in flight. The id is `request_id` (the client's x-request-id) when it is
  // 1-128 printable ASCII characters (it goes into the log line), else a number of our own.
  CallRecord(ServiceContext& service, const char* method, const char* protocol,
             std::string_view request_id);
  CallRecord(const CallRecord&) = delete;
  CallRecord& operator=(const CallRecord&) = delete;

  const std::string& id() const { return id_; }
  std::uint64_t number() const { return number_; }
  void set_model(const std::string& model) { model_ = model; }
  void set_tenant(const std::string& tenant) { tenant_ = tenant; }
  void add_sentences(int sentences, long source_tokens) {
    sentences_ += sentences;
    source_tokens_ += source_tokens;
  }
  void add_target_tokens(long tokens) { target_tokens_ += tokens; }
  void add_cached_sentences(int sentences) { cached_sentences_ += sentences; }
  // Characters the call was charged (ApiKeys::admit), or given back (negative) by a refund.
  void add_charged_characters(std::int64_t characters) { charged_characters_ += characters; }
  std::int64_t charged_characters() const { return charged_characters_; }

  // Records the metric and the log line and leaves the in-flight count. Call once.
  void complete(const RequestStatus& status);

 private:
  ServiceContext& service_;
  const char* method_;
  const char* protocol_;
  std::uint64_t number_;
  std::string id_;
  std::string model_;   // empty until routed (ListModels, unroutable or bad requests)
  std::string tenant_;  // with --api-keys, the key's tenant once known (never the key)
  int sentences_ = 0;
  int cached_sentences_ = 0;  // of sentences_, answered from the translation cache
  long source_tokens_ = 0;
  long target_tokens_ = 0;
  std::int64_t charged_characters_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace rpt::server
