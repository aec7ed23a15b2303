// grpc.health.v1.Health (Check and Watch) for rpt-server, in place of gRPC's default service,
// whose Watch streams never end on their own: open ones (service meshes and Envoy hold them)
// kept gRPC's Shutdown waiting until its deadline, the whole grace period, after the last call.
// This one finishes every Watch stream when the drain is over (finish_watches), so the server
// stops as soon as its work is done.
#pragma once

#include <map>
#include <mutex>
#include <set>
#include <string>

#include "grpc/health/v1/health.grpc.pb.h"

namespace rpt::server {

class HealthWatch;

class HealthService final : public grpc::health::v1::Health::CallbackService {
 public:
  using ServingStatus = grpc::health::v1::HealthCheckResponse::ServingStatus;

  // `services`: the names Check and Watch know besides "" (the server as a whole); all start
  // NOT_SERVING.
  explicit HealthService(const std::set<std::string>& services);
  ~HealthService() override;

  // Every known service SERVING or NOT_SERVING; each open Watch stream is sent the change.
  void set_serving(bool serving);
  // NOT_SERVING for good: each Watch stream is sent it (if it had not been) and finished with OK;
  // a Watch that starts later gets NOT_SERVING and is finished at once.
  void finish_watches();

  grpc::ServerUnaryReactor* Check(grpc::CallbackServerContext* context,
                                  const grpc::health::v1::HealthCheckRequest* request,
                                  grpc::health::v1::HealthCheckResponse* response) override;
  grpc::ServerWriteReactor<grpc::health::v1::HealthCheckResponse>* Watch(
      grpc::CallbackServerContext* context,
      const grpc::health::v1::HealthCheckRequest* request) override;

 private:
  friend class HealthWatch;
  void forget(HealthWatch* watch);  // the stream is done

  std::mutex mutex_;  // guards all below; taken before any HealthWatch's own
  std::map<std::string, ServingStatus> statuses_;
  ServingStatus status_of(const std::string& service) const;  // mutex_ held

  std::map<HealthWatch*, std::string> watches_;  // open streams -> the service each watches
  bool finished_ = false;
};

}  // namespace rpt::server
