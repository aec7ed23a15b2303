#include "client/grpc_caller.h"

#include <utility>

#include "client/status_names.h"

namespace rpt::client {
namespace {

// One call in flight: what gRPC reads and writes until the call's callback runs.
struct GrpcCall {
  grpc::ClientContext context;
  v1::TranslateRequest request;
  v1::TranslateResponse response;
  Caller::Done done;
};

CallOutcome outcome_of(const grpc::Status& status, const v1::TranslateResponse& response) {
  CallOutcome outcome;
  outcome.code = status_name(status.error_code());
  if (!status.ok()) return outcome;
  outcome.sentences = response.translations_size();
  for (const auto& translation : response.translations()) {
    outcome.target_tokens += translation.target_tokens();
  }
  return outcome;
}

}  // namespace

GrpcCaller::GrpcCaller(const std::shared_ptr<grpc::Channel>& channel, TranslateSettings settings)
    : stub_(v1::Translator::NewStub(channel)), settings_(std::move(settings)) {}

void GrpcCaller::start(std::vector<std::string> texts, Clock::time_point deadline, Done done) {
  auto call = std::make_unique<GrpcCall>();
  call->request.mutable_model()->set_model(settings_.model);
  call->request.mutable_options()->set_beam_size(static_cast<std::uint32_t>(settings_.beam_size));
  for (std::string& text : texts) call->request.add_texts(std::move(text));
  // gRPC deadlines are on the system clock.
  call->context.set_deadline(std::chrono::system_clock::now() + (deadline - Clock::now()));
  if (!settings_.api_key.empty()) {
    call->context.AddMetadata("authorization", "Bearer " + settings_.api_key);
  }
  call->done = std::move(done);
  GrpcCall* pending = call.release();  // the callback owns it
  stub_->async()->Translate(&pending->context, &pending->request, &pending->response,
                            [pending](grpc::Status status) {
                              std::unique_ptr<GrpcCall> ended(pending);
                              CallOutcome outcome = outcome_of(status, ended->response);
                              Done report = std::move(ended->done);
                              ended.reset();
                              report(std::move(outcome));
                            });
}

}  // namespace rpt::client
