// rpt.v1.Translator over gRPC's callback API: no thread is held per call. Translate and
// TranslateStream use the raw variant (serialized messages) so that rpt-server decodes requests
// itself and names a field with invalid UTF-8 (server/grpc_wire.h). A call validates and
// routes its request on the gRPC thread, queues a TranslationJob on the model's Scheduler and
// returns; the scheduler thread fills the response (or streams each sentence) and finishes the
// call. Handlers never throw: every failure is a RequestStatus mapped in server/status.cc.
#pragma once

#include "proto/translate.grpc.pb.h"
#include "server/call_record.h"

namespace rpt::server {

using TranslatorServiceBase = v1::Translator::WithRawCallbackMethod_Translate<
    v1::Translator::WithRawCallbackMethod_TranslateStream<
        v1::Translator::WithCallbackMethod_ListModels<v1::Translator::Service>>>;

class TranslatorService final : public TranslatorServiceBase {
 public:
  explicit TranslatorService(ServiceContext& context) : context_(context) {}

  // Request and response: serialized TranslateRequest and TranslateResponse.
  grpc::ServerUnaryReactor* Translate(grpc::CallbackServerContext* context,
                                      const grpc::ByteBuffer* request,
                                      grpc::ByteBuffer* response) override;
  // Request: a serialized TranslateRequest; writes serialized TranslateStreamResponse messages.
  grpc::ServerWriteReactor<grpc::ByteBuffer>* TranslateStream(
      grpc::CallbackServerContext* context, const grpc::ByteBuffer* request) override;
  grpc::ServerUnaryReactor* ListModels(grpc::CallbackServerContext* context,
                                       const v1::ListModelsRequest* request,
                                       v1::ListModelsResponse* response) override;

 private:
  ServiceContext& context_;
};

}  // namespace rpt::server
