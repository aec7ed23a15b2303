#include "server/call_record.h"

#include <spdlog/spdlog.h>

namespace rpt::server {

CallRecord::CallRecord(ServiceContext& service, const char* method,
                       const grpc::ServerContextBase& context)
    : service_(service), method_(method), number_(service.next_call_id.fetch_add(1)) {
  service_.in_flight.fetch_add(1);
  const auto& metadata = context.client_metadata();
  const auto found = metadata.find("x-request-id");
  if (found != metadata.end() && !found->second.empty() && found->second.size() <= 128) {
    id_.assign(found->second.data(), found->second.size());
  } else {
    id_ = "r" + std::to_string(number_);
  }
}

void CallRecord::complete(const RequestStatus& status) {
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const std::string_view code = code_name(status.code);
  service_.metrics.record_request(model_, method_, code, seconds);
  const auto level = status.code == StatusCode::kInternal ? spdlog::level::err
                                                          : spdlog::level::info;
  spdlog::log(level,
              "request id={} method={} model={} sentences={} source_tokens={} target_tokens={} "
              "latency_ms={:.2f} code={}{}{}",
              id_, method_, model_.empty() ? "-" : model_, sentences_, source_tokens_,
              target_tokens_, seconds * 1e3, code, status.message.empty() ? "" : " message=",
              status.message);
  service_.in_flight.fetch_sub(1);
}

}  // namespace rpt::server
