#include "server/deepl_documents.h"

#include <utility>
#include <vector>

#include "server/deepl_accounts.h"
#include "server/translation_entry.h"

namespace rpt::server {

// One uploaded document: the translation call and its outcome. Keeps itself alive until the
// scheduler is done with it (self_), whatever the store does meanwhile.
class DeepLDocuments::Job final : public JobObserver {
 public:
  Job(ServiceContext& service, std::string api_key, std::string document_key,
      std::string content_type, long long characters)
      : record_(service, "TranslateDocument", kProtocolHttp, ""),
        api_key_(std::move(api_key)),
        document_key_(std::move(document_key)),
        content_type_(std::move(content_type)),
        characters_(characters),
        created_(std::chrono::steady_clock::now()) {}

  RequestStatus start(ServiceContext& service, const v1::TranslateRequest& request,
                      const std::shared_ptr<Job>& self) {
    RequestStatus status = prepare_translation(service, request, {api_key_, kDeepLSelectorFields},
                                               Clock::time_point::max(), this, record_, &pending_);
    if (status.ok()) {
      std::lock_guard lock(mutex_);
      self_ = self;
    }
    if (status.ok()) {
      status = submit_translation(pending_);
      if (!status.ok()) refund_translation(service, api_key_, record_);  // queue full
    }
    if (!status.ok()) {
      std::lock_guard lock(mutex_);
      if (!finished_) {  // refused before the scheduler had it: nothing will call on_finish
        self_.reset();
        record_.complete(status);
      }
    }
    return status;
  }

  void on_sentence(int, TranslationResult result) override {
    v1::Translation translation;
    collect_sentence(result, pending_, record_, &translation);
    std::lock_guard lock(mutex_);
    result_ = translation.hypotheses(0).text();
    started_ = true;
  }

  void on_finish(const RequestStatus& status) override {
    std::shared_ptr<Job> keep;
    {
      std::lock_guard lock(mutex_);
      finished_ = true;
      outcome_ = status;
      record_.complete(status);
      keep = std::move(self_);
    }
  }

  bool owned_by(const std::string& api_key, const std::string& document_key) const {
    return api_key == api_key_ && document_key == document_key_;
  }
  const std::string& api_key() const { return api_key_; }
  bool expired(std::chrono::seconds lifetime) const {
    return std::chrono::steady_clock::now() - created_ > lifetime;
  }
  void cancel() const { pending_.cancel(); }

  Status status() {
    std::lock_guard lock(mutex_);
    Status out;
    out.billed_characters = characters_;
    if (!finished_) {
      out.state = started_ ? "translating" : "queued";
    } else if (outcome_.ok()) {
      out.state = "done";
    } else {
      out.state = "error";
      out.error = outcome_.message;
    }
    return out;
  }

  // Moves the result out once finished; false while not.
  bool result(std::string* bytes, std::string* content_type, RequestStatus* outcome) {
    std::lock_guard lock(mutex_);
    if (!finished_) return false;
    *outcome = outcome_;
    if (!outcome_.ok()) return true;
    *bytes = std::move(result_);
    *content_type = content_type_;
    return true;
  }

 private:
  CallRecord record_;
  PendingTranslation pending_;
  const std::string api_key_;
  const std::string document_key_;
  const std::string content_type_;
  const long long characters_;
  const std::chrono::steady_clock::time_point created_;
  std::mutex mutex_;
  std::shared_ptr<Job> self_;
  bool started_ = false;
  bool finished_ = false;
  RequestStatus outcome_;
  std::string result_;
};

DeepLDocuments::~DeepLDocuments() {
  std::lock_guard lock(mutex_);
  for (const auto& [id, job] : jobs_) job->cancel();
}

void DeepLDocuments::forget_expired() {
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    if (it->second->expired(limits_.lifetime)) {
      it->second->cancel();
      it = jobs_.erase(it);
    } else {
      ++it;
    }
  }
}

RequestStatus DeepLDocuments::start(const std::string& api_key, const v1::TranslateRequest& request,
                                    std::string content_type, long long characters,
                                    Handle* handle) {
  {
    std::lock_guard lock(mutex_);
    forget_expired();
    std::size_t held = 0;
    for (const auto& [id, job] : jobs_) held += job->api_key() == api_key ? 1 : 0;
    if (held >= limits_.max_documents_per_key) {
      return {StatusCode::kResourceExhausted,
              "Too many documents held for this key: download or wait for the ones uploaded"};
    }
  }
  handle->id = deepl_random_id();
  handle->key = deepl_random_id() + deepl_random_id();
  auto job =
      std::make_shared<Job>(service_, api_key, handle->key, std::move(content_type), characters);
  RequestStatus status = job->start(service_, request, job);
  if (!status.ok()) return status;
  std::lock_guard lock(mutex_);
  jobs_.emplace(handle->id, std::move(job));
  return RequestStatus::Ok();
}

RequestStatus DeepLDocuments::status(const std::string& api_key, const Handle& handle,
                                     Status* out) {
  std::shared_ptr<Job> job;
  {
    std::lock_guard lock(mutex_);
    const auto found = jobs_.find(handle.id);
    if (found == jobs_.end() || !found->second->owned_by(api_key, handle.key)) {
      return {StatusCode::kNotFound, "Document not found."};
    }
    job = found->second;
  }
  *out = job->status();
  return RequestStatus::Ok();
}

RequestStatus DeepLDocuments::take_result(const std::string& api_key, const Handle& handle,
                                          std::string* bytes, std::string* content_type) {
  std::lock_guard lock(mutex_);
  const auto found = jobs_.find(handle.id);
  if (found == jobs_.end() || !found->second->owned_by(api_key, handle.key)) {
    return {StatusCode::kNotFound, "Document not found."};
  }
  RequestStatus outcome;
  // DeepL answers 503 to a download before the translation is done.
  if (!found->second->result(bytes, content_type, &outcome)) {
    return {StatusCode::kUnavailable, "Document not ready."};
  }
  jobs_.erase(found);  // downloaded once, or failed
  return outcome;
}

}  // namespace rpt::server
