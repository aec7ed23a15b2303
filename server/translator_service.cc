#include "server/translator_service.h"

#include <deque>
#include <memory>
#include <mutex>
#include <optional>

#include "server/request_validation.h"

namespace rpt::server {
namespace {

Clock::time_point steady_deadline(const grpc::CallbackServerContext& context) {
  const auto deadline = context.deadline();
  if (deadline == std::chrono::system_clock::time_point::max()) return Clock::time_point::max();
  const auto left = deadline - std::chrono::system_clock::now();
  if (left > std::chrono::hours(24 * 365)) return Clock::time_point::max();
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(left);
}

void fill_translation(const TranslationResult& result, const PreparedRequest& request,
                      v1::Translation* out) {
  out->set_source_tokens(static_cast<std::uint32_t>(result.source_tokens));
  if (!result.hypotheses.empty()) {
    out->set_target_tokens(static_cast<std::uint32_t>(result.hypotheses[0].ids.size()));
  }
  for (const TranslationHypothesis& h : result.hypotheses) {
    v1::Hypothesis* hypothesis = out->add_hypotheses();
    hypothesis->set_text(h.text);
    if (request.return_scores) hypothesis->set_score(h.score);
    if (request.return_tokens) {
      for (const std::string& token : h.tokens) hypothesis->add_tokens(token);
    }
  }
}

// The part of a Translate/TranslateStream call that does not depend on how results are sent:
// validation, routing, submission, cancellation. `Reactor` is the gRPC reactor base.
template <typename Reactor>
class TranslationCall : public Reactor, public JobObserver {
 public:
  TranslationCall(ServiceContext& service, const char* method,
                  grpc::CallbackServerContext* context)
      : service_(service), context_(context), record_(service, method, *context) {}

  // Validates and queues `request`; on refusal finishes the call at once.
  void start(const v1::TranslateRequest& request) {
    RequestStatus status = submit(request);
    if (!status.ok()) on_finish(status);
  }

  void OnCancel() override {
    if (job_ != nullptr) {
      job_->cancelled.store(true);
      served_->scheduler->wake();
    }
  }
  void OnDone() override { delete this; }

 protected:
  // Sends the final status; `this` may be gone when it returns.
  void complete(const RequestStatus& status) {
    record_.complete(status);
    this->Finish(to_grpc(status));
  }

  ServiceContext& service_;
  grpc::CallbackServerContext* context_;
  CallRecord record_;
  PreparedRequest prepared_;
  ServedModel* served_ = nullptr;
  std::shared_ptr<TranslationJob> job_;

 private:
  RequestStatus submit(const v1::TranslateRequest& request) {
    // Routed first, so that a call refused while draining is counted under its model.
    const v1::ModelSelector& selector = request.model();
    RequestStatus routed = service_.registry.find(
        {selector.model(), selector.source_language(), selector.target_language()}, &served_);
    if (routed.ok()) record_.set_model(served_->name);
    if (service_.draining.load()) {
      return {StatusCode::kUnavailable, "the server is shutting down; retry on another replica"};
    }
    if (!routed.ok()) return routed;
    RequestStatus valid = prepare_request(request, *served_, service_.options.limits,
                                          service_.options.default_decoding, &prepared_);
    if (!valid.ok()) return valid;

    auto job = std::make_shared<TranslationJob>();
    job->id = record_.number();
    job->source_ids = prepared_.source_ids;
    job->options = prepared_.options;
    job->deadline = steady_deadline(*context_);
    job->observer = this;
    record_.add_sentences(static_cast<int>(job->source_ids.size()), job->source_tokens());
    prepare_results(static_cast<int>(job->source_ids.size()));
    job_ = job;  // before submit: OnCancel may run as soon as the job is queued
    return served_->scheduler->submit(job);
  }

  virtual void prepare_results(int texts) = 0;
};

class UnaryCall final : public TranslationCall<grpc::ServerUnaryReactor> {
 public:
  UnaryCall(ServiceContext& service, grpc::CallbackServerContext* context,
            v1::TranslateResponse* response)
      : TranslationCall(service, "Translate", context), response_(response) {}

  void on_sentence(int index, TranslationResult result) override {
    if (!result.hypotheses.empty()) {
      record_.add_target_tokens(static_cast<long>(result.hypotheses[0].ids.size()));
    }
    fill_translation(result, prepared_, response_->mutable_translations(index));
  }
  void on_finish(const RequestStatus& status) override {
    if (status.ok()) {
      response_->set_model(served_->name);
    } else {
      response_->Clear();
    }
    complete(status);
  }

 private:
  void prepare_results(int texts) override {
    for (int i = 0; i < texts; ++i) response_->add_translations();
  }

  v1::TranslateResponse* response_;
};

// Writes one message per finished sentence; gRPC allows one write in flight, so later ones wait
// in `pending_` and the final status waits for the last write.
class StreamCall final : public TranslationCall<grpc::ServerWriteReactor<v1::TranslateStreamResponse>> {
 public:
  StreamCall(ServiceContext& service, grpc::CallbackServerContext* context)
      : TranslationCall(service, "TranslateStream", context) {}

  void on_sentence(int index, TranslationResult result) override {
    if (!result.hypotheses.empty()) {
      record_.add_target_tokens(static_cast<long>(result.hypotheses[0].ids.size()));
    }
    v1::TranslateStreamResponse* to_write = nullptr;
    {
      std::lock_guard lock(mutex_);
      if (broken_) return;  // nobody reads any more
      v1::TranslateStreamResponse& message = pending_.emplace_back();
      message.set_index(static_cast<std::uint32_t>(index));
      message.set_model(served_->name);
      fill_translation(result, prepared_, message.mutable_translation());
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
    v1::TranslateStreamResponse* to_write = nullptr;
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
    if (!ok && job_ != nullptr) {
      job_->cancelled.store(true);
      served_->scheduler->wake();
    }
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
    return status;
  }

  std::mutex mutex_;
  std::deque<v1::TranslateStreamResponse> pending_;  // front: the write in flight
  bool writing_ = false;
  bool broken_ = false;  // a write failed: the client is gone
  std::optional<RequestStatus> final_status_;
};

}  // namespace

grpc::ServerUnaryReactor* TranslatorService::Translate(grpc::CallbackServerContext* context,
                                                       const v1::TranslateRequest* request,
                                                       v1::TranslateResponse* response) {
  auto* call = new UnaryCall(context_, context, response);  // deletes itself in OnDone
  call->start(*request);
  return call;
}

grpc::ServerWriteReactor<v1::TranslateStreamResponse>* TranslatorService::TranslateStream(
    grpc::CallbackServerContext* context, const v1::TranslateRequest* request) {
  auto* call = new StreamCall(context_, context);  // deletes itself in OnDone
  call->start(*request);
  return call;
}

grpc::ServerUnaryReactor* TranslatorService::ListModels(grpc::CallbackServerContext* context,
                                                        const v1::ListModelsRequest*,
                                                        v1::ListModelsResponse* response) {
  CallRecord record(context_, "ListModels", *context);
  RequestStatus status;
  if (context_.draining.load()) {
    status = {StatusCode::kUnavailable, "the server is shutting down; retry on another replica"};
  } else {
    for (const auto& served : context_.registry.models()) {
      const ModelDescription& d = served->description;
      v1::ModelInfo* info = response->add_models();
      info->set_name(d.name);
      info->set_source_language(d.source_language);
      info->set_target_language(d.target_language);
      info->set_device(d.device);
      info->set_dtype(d.dtype);
      info->set_position_type(d.position_type);
      const PositionConfig& position = served->model->config().position;
      if (position.type == PositionType::kRelative) {
        info->set_max_relative_position(
            static_cast<std::uint32_t>(position.encoder_max_relative_position));
      }
      info->set_max_input_length(static_cast<std::uint32_t>(served->max_input_length));
    }
  }
  record.complete(status);
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(to_grpc(status));
  return reactor;
}

}  // namespace rpt::server
