// rpt-loadgen's calls over gRPC: Translate through the callback API (no thread per call in
// flight), each call's deadline sent along as gRPC deadlines are.
#pragma once

#include <memory>

#include <grpcpp/grpcpp.h>

#include "client/caller.h"
#include "proto/translate.grpc.pb.h"

namespace rpt::client {

class GrpcCaller final : public Caller {
 public:
  GrpcCaller(const std::shared_ptr<grpc::Channel>& channel, TranslateSettings settings);

  void start(std::vector<std::string> texts, Clock::time_point deadline, Done done) override;

 private:
  std::unique_ptr<v1::Translator::Stub> stub_;
  TranslateSettings settings_;
};

}  // namespace rpt::client
