// rpt.v1.Translator over gRPC's callback API: no thread is held per call. A call validates and
// routes its request on the gRPC thread, queues a TranslationJob on the model's Scheduler and
// returns; the scheduler thread fills the response (or streams each sentence) and finishes the
// call. Handlers never throw: every failure is a RequestStatus mapped in server/status.cc.
#pragma once

#include "proto/translate.grpc.pb.h"
#include "server/call_record.h"

namespace rpt::server {

class TranslatorService final : public v1::Translator::CallbackService {
 public:
  explicit TranslatorService(ServiceContext& context) : context_(context) {}

  grpc::ServerUnaryReactor* Translate(grpc::CallbackServerContext* context,
                                      const v1::TranslateRequest* request,
                                      v1::TranslateResponse* response) override;
  grpc::ServerWriteReactor<v1::TranslateStreamResponse>* TranslateStream(
      grpc::CallbackServerContext* context, const v1::TranslateRequest* request) override;
  grpc::ServerUnaryReactor* ListModels(grpc::CallbackServerContext* context,
                                       const v1::ListModelsRequest* request,
                                       v1::ListModelsResponse* response) override;

 private:
  ServiceContext& context_;
};

}  // namespace rpt::server
