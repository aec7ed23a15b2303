#include "server/translator_service.h"

#include <deque>
#include <memory>
#include <mutex>
#include <optional>

#include "server/grpc_wire.h"
#include "server/translation_entry.h"

namespace rpt::server {
namespace {

Clock::time_point steady_deadline(const grpc::CallbackServerContext& context) {
  const auto deadline = context.deadline();
  if (deadline == std::chrono::system_clock::time_point::max()) return Clock::time_point::max();
  const auto left = deadline - std::chrono::system_clock::now();
  if (left > std::chrono::hours(24 * 365)) return Clock::time_point::max();
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(left);
}

// The part of a Translate/TranslateStream call that does not depend on how results are sent:
// validation, routing, submission, cancellation. `Reactor` is the gRPC reactor base.
template <typename Reactor>
class TranslationCall : public Reactor, public JobObserver {
 public:
  TranslationCall(ServiceContext& service, const char* method, grpc::CallbackServerContext* context)
      : service_(service),
        context_(context),
        record_(service, method, kProtocolGrpc, grpc_request_id(*context)) {}

  // Decodes, validates and queues the request (translation_entry.h, shared with HTTP); on
  // refusal finishes the call at once.
  void start(const grpc::ByteBuffer& raw) {
    v1::TranslateRequest request;
    RequestStatus status = decode_translate_request(raw, &request);
    const std::string api_key = bearer_token(*context_);
    if (status.ok()) {
      status = prepare_translation(service_, request, {api_key}, steady_deadline(*context_), this,
                                   record_, &translation_);
    }
    if (status.ok()) {
      prepare_results(translation_.texts());
      status = submit_translation(translation_);
      if (!status.ok()) refund_translation(service_, api_key, record_);  // queue full
    }
    if (!status.ok()) on_finish(status);
  }

  void OnCancel() override { translation_.cancel(); }
  void OnDone() override { delete this; }

 protected:
  // Sends the final status; `this` may be gone when it returns.
  void complete(const RequestStatus& status) {
    record_.complete(status);
    // A tenant's empty token bucket (--api-keys): when to come back, as HTTP's Retry-After.
    if (status.retry_after_seconds > 0) {
      context_->AddTrailingMetadata("retry-after", std::to_string(status.retry_after_seconds));
    }
    this->Finish(to_grpc(status));
  }

  ServiceContext& service_;
  grpc::CallbackServerContext* context_;
  CallRecord record_;
  // Filled before submission: OnCancel may run as soon as the job is queued.
  PendingTranslation translation_;

 private:
  virtual void prepare_results(int texts) = 0;
};

class UnaryCall final : public TranslationCall<grpc::ServerUnaryReactor> {
 public:
  UnaryCall(ServiceContext& service, grpc::CallbackServerContext* context,
            grpc::ByteBuffer* response)
      : TranslationCall(service, "Translate", context), raw_response_(response) {}

  void on_sentence(int index, TranslationResult result) override {
    collect_sentence(result, translation_, record_, response_.mutable_translations(index));
  }
  void on_finish(const RequestStatus& status) override {
    RequestStatus outcome = status;
    if (outcome.ok()) {
      response_.set_model(translation_.model->name);
      if (!encode_message(response_, raw_response_)) {
        outcome = {StatusCode::kInternal, "the response could not be serialized"};
      }
    }
    complete(outcome);
  }

 private:
  void prepare_results(int texts) override {
    for (int i = 0; i < texts; ++i) response_.add_translations();
  }

  v1::TranslateResponse response_;
  grpc::ByteBuffer* raw_response_;  // gRPC's, filled at the end
};

// Writes one message per finished sentence; gRPC allows one write in flight, so later ones wait
// in `pending_` and the final status waits for the last write.
class StreamCall final : public TranslationCall<grpc::ServerWriteReactor<grpc::ByteBuffer>> {
 public:
  StreamCall(ServiceContext& service, grpc::CallbackServerContext* context)
      : TranslationCall(service, "TranslateStream", context) {}

  void on_sentence(int index, TranslationResult result) override {
    grpc::ByteBuffer* to_write = nullptr;
    {
      std::lock_guard lock(mutex_);
      if (broken_) return;  // nobody reads any more
      v1::TranslateStreamResponse message;
      message.set_index(static_cast<std::uint32_t>(index));
      message.set_model(translation_.model->name);
      collect_sentence(result, translation_, record_, message.mutable_translation());
      if (!encode_message(message, &pending_.emplace_back())) {
        pending_.pop_back();
        serialization_failed_ = true;  // the call ends INTERNAL
        return;
      }
      if (!writing_) {
        writing_ = true;
        to_write = &pending_.front();
      }
    }
    if (to_write != nullptr) StartWrite(to_write);
  }

  void on_finish(const RequestStatus& status) override {
    RequestStatus outcome;
    {
      std::lock_guard lock(mutex_);
      final_status_ = status;
      // A failed call sends nothing more; the write in flight (the front) must stay alive.
      if (!status.ok() && pending_.size() > 1) pending_.erase(pending_.begin() + 1, pending_.end());
      if (writing_) return;  // OnWriteDone finishes
      outcome = delivered(status);
    }
    complete(outcome);
  }

  void OnWriteDone(bool ok) override {
    grpc::ByteBuffer* to_write = nullptr;
    std::optional<RequestStatus> finish;
    {
      std::lock_guard lock(mutex_);
      pending_.pop_front();
      if (!ok) {
        // The stream broke (client gone): stop writing; the job is cancelled below.
        pending_.clear();
        broken_ = true;
      }
      if (ok && !pending_.empty()) {
        to_write = &pending_.front();
      } else {
        writing_ = false;
        if (final_status_.has_value()) finish = delivered(*final_status_);
      }
    }
    if (!ok) translation_.cancel();
    if (to_write != nullptr) {
      StartWrite(to_write);
    } else if (finish.has_value()) {
      complete(*finish);
    }
  }

 private:
  void prepare_results(int) override {}

  // The call's outcome as the client saw it: translated, but not every result written (the
  // stream broke) is no OK call in the metrics and the log. Caller holds mutex_.
  RequestStatus delivered(const RequestStatus& status) const {
    if (broken_ && status.ok()) {
      return {StatusCode::kCancelled, "the stream broke before every result was written"};
    }
    if (serialization_failed_ && status.ok()) {
      return {StatusCode::kInternal, "a result could not be serialized"};
    }
    return status;
  }

  std::mutex mutex_;
  std::deque<grpc::ByteBuffer> pending_;  // serialized messages; front: the write in flight
  bool writing_ = false;
  bool broken_ = false;  // a write failed: the client is gone
  bool serialization_failed_ = false;
  std::optional<RequestStatus> final_status_;
};

}  // namespace

grpc::ServerUnaryReactor* TranslatorService::Translate(grpc::CallbackServerContext* context,
                                                       const grpc::ByteBuffer* request,
                                                       grpc::ByteBuffer* response) {
  auto* call = new UnaryCall(context_, context, response);  // deletes itself in OnDone
  call->start(*request);
  return call;
}

grpc::ServerWriteReactor<grpc::ByteBuffer>* TranslatorService::TranslateStream(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request) {
  auto* call = new StreamCall(context_, context);  // deletes itself in OnDone
  call->start(*request);
  return call;
}

grpc::ServerUnaryReactor* TranslatorService::ListModels(grpc::CallbackServerContext* context,
                                                        const v1::ListModelsRequest*,
                                                        v1::ListModelsResponse* response) {
  CallRecord record(context_, "ListModels", kProtocolGrpc, grpc_request_id(*context));
  const RequestStatus status = list_models(context_, response);
  record.complete(status);
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(to_grpc(status));
  return reactor;
}

}  // namespace rpt::server
