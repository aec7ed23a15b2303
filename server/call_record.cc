#include "server/call_record.h"

#include <optional>

#include <spdlog/spdlog.h>

#include "proto/translate.pb.h"

namespace rpt::server {

namespace {

bool usable_request_id(std::string_view id) {
  if (id.empty() || id.size() > 128) return false;
  for (const char c : id) {
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}

}  // namespace

std::string bearer_token(const grpc::ServerContextBase& context) {
  const auto& metadata = context.client_metadata();
  const auto found = metadata.find("authorization");
  if (found == metadata.end()) return {};
  const std::string value(found->second.data(), found->second.size());
  return value.rfind("Bearer ", 0) == 0 ? value.substr(7) : std::string();
}

std::string grpc_request_id(const grpc::ServerContextBase& context) {
  const auto& metadata = context.client_metadata();
  const auto found = metadata.find("x-request-id");
  if (found == metadata.end()) return {};
  return std::string(found->second.data(), found->second.size());
}

void refund_translation(ServiceContext& service, std::string_view api_key, CallRecord& record) {
  if (!service.api_keys.enabled()) return;
  service.api_keys.refund(api_key, record.charged_characters());
  record.add_charged_characters(-record.charged_characters());
}

CallRecord::CallRecord(ServiceContext& service, const char* method, const char* protocol,
                       std::string_view request_id)
    : service_(service),
      method_(method),
      protocol_(protocol),
      number_(service.next_call_id.fetch_add(1)) {
  service_.in_flight.fetch_add(1);
  if (usable_request_id(request_id)) {
    id_ = request_id;
  } else {
    id_ = "r";  // appended, not "r" + ...: GCC 12's -Wrestrict misfires on that (PR 105651)
    id_ += std::to_string(number_);
  }
}

void CallRecord::complete(const RequestStatus& status) {
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const std::string_view code = code_name(status.code);
  service_.metrics.record_request({.model = model_, .method = method_, .protocol = protocol_}, code,
                                  seconds);
  if (service_.api_keys.enabled()) {
    service_.metrics.record_tenant_call(tenant_.empty() ? "_none" : tenant_, code,
                                        charged_characters_);
  }
  const auto level =
      status.code == StatusCode::kInternal ? spdlog::level::err : spdlog::level::info;
  spdlog::log(level,
              "request id={} protocol={} method={} model={}{}{} sentences={} cached={} "
              "source_tokens={} target_tokens={} latency_ms={:.2f} code={}{}{}",
              id_, protocol_, method_, model_.empty() ? "-" : model_,
              tenant_.empty() ? "" : " tenant=", tenant_, sentences_, cached_sentences_,
              source_tokens_, target_tokens_, seconds * 1e3, code,
              status.message.empty() ? "" : " message=", status.message);
  service_.in_flight.fetch_sub(1);
}

}  // namespace rpt::server
