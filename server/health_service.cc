#include "server/health_service.h"

#include <optional>

namespace rpt::server {

using grpc::health::v1::HealthCheckRequest;
using grpc::health::v1::HealthCheckResponse;

// One Watch stream: sends the status now and at each change; at most one write in flight, later
// changes collapse into the newest. Deletes itself when gRPC is done with it.
class HealthWatch final : public grpc::ServerWriteReactor<HealthCheckResponse> {
 public:
  explicit HealthWatch(HealthService& service) : service_(service) {}

  // The caller holds the service's mutex (so this object is alive).
  void send(HealthService::ServingStatus status) {
    std::lock_guard lock(mutex_);
    if (finishing_ || finished_) return;
    if (writing_) {
      pending_ = status;
      return;
    }
    write(status);
  }

  // Sends NOT_SERVING unless that was the last status sent, then finishes with OK. The caller
  // holds the service's mutex.
  void finish() {
    std::lock_guard lock(mutex_);
    if (finishing_ || finished_) return;
    finishing_ = true;
    if (writing_) {
      pending_ = HealthCheckResponse::NOT_SERVING;
    } else if (last_sent_ != HealthCheckResponse::NOT_SERVING) {
      write(HealthCheckResponse::NOT_SERVING);
    } else {
      finish_with(grpc::Status::OK);
    }
  }

  void OnWriteDone(bool ok) override {
    std::lock_guard lock(mutex_);
    writing_ = false;
    if (!ok) {  // the client went away or the call was cancelled
      finish_with(grpc::Status::CANCELLED);
      return;
    }
    if (pending_ && *pending_ != last_sent_) {
      const auto status = *pending_;
      pending_.reset();
      write(status);
      return;
    }
    pending_.reset();
    if (finishing_) finish_with(grpc::Status::OK);
  }

  void OnCancel() override {
    std::lock_guard lock(mutex_);
    finish_with(grpc::Status::CANCELLED);
  }

  void OnDone() override {
    service_.forget(this);
    delete this;
  }

 private:
  void write(HealthService::ServingStatus status) {  // mutex_ held
    response_.set_status(status);
    last_sent_ = status;
    writing_ = true;
    StartWrite(&response_);
  }

  void finish_with(const grpc::Status& status) {  // mutex_ held
    if (finished_) return;
    finished_ = true;
    Finish(status);
  }

  HealthService& service_;
  std::mutex mutex_;              // guards all below
  HealthCheckResponse response_;  // the write in flight
  std::optional<HealthService::ServingStatus> pending_;
  HealthService::ServingStatus last_sent_ = HealthCheckResponse::UNKNOWN;
  bool writing_ = false;
  bool finishing_ = false;
  bool finished_ = false;
};

HealthService::HealthService(const std::set<std::string>& services) {
  statuses_[""] = HealthCheckResponse::NOT_SERVING;
  for (const std::string& name : services) statuses_[name] = HealthCheckResponse::NOT_SERVING;
}

HealthService::~HealthService() = default;

void HealthService::set_serving(bool serving) {
  std::lock_guard lock(mutex_);
  if (finished_) return;
  for (auto& [name, status] : statuses_) {
    status = serving ? HealthCheckResponse::SERVING : HealthCheckResponse::NOT_SERVING;
  }
  for (const auto& [watch, service] : watches_) watch->send(status_of(service));
}

void HealthService::finish_watches() {
  std::lock_guard lock(mutex_);
  finished_ = true;
  for (auto& [name, status] : statuses_) status = HealthCheckResponse::NOT_SERVING;
  for (const auto& [watch, service] : watches_) watch->finish();
}

HealthService::ServingStatus HealthService::status_of(const std::string& service) const {
  const auto found = statuses_.find(service);
  return found == statuses_.end() ? HealthCheckResponse::SERVICE_UNKNOWN : found->second;
}

grpc::ServerUnaryReactor* HealthService::Check(grpc::CallbackServerContext* context,
                                               const HealthCheckRequest* request,
                                               HealthCheckResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  std::lock_guard lock(mutex_);
  const ServingStatus status = status_of(request->service());
  if (status == HealthCheckResponse::SERVICE_UNKNOWN) {
    reactor->Finish(grpc::Status(grpc::StatusCode::NOT_FOUND,
                                 "no such service: \"" + request->service() + "\""));
  } else {
    response->set_status(status);
    reactor->Finish(grpc::Status::OK);
  }
  return reactor;
}

grpc::ServerWriteReactor<HealthCheckResponse>* HealthService::Watch(
    grpc::CallbackServerContext* /*context*/, const HealthCheckRequest* request) {
  auto* watch = new HealthWatch(*this);
  std::lock_guard lock(mutex_);
  watches_.emplace(watch, request->service());
  // An unknown service is watched too (SERVICE_UNKNOWN), as the health protocol asks.
  watch->send(status_of(request->service()));
  if (finished_) watch->finish();
  return watch;
}

void HealthService::forget(HealthWatch* watch) {
  std::lock_guard lock(mutex_);
  watches_.erase(watch);
}

}  // namespace rpt::server
