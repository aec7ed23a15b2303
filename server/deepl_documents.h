// DeepL's document API behind rpt (server/deepl_api.h): a file uploaded with POST /v2/document
// is translated in the background as one text of its format (plain text, HTML, XML, XLIFF, PO:
// docs/documents.md, docs/localization.md) through the shared path (server/translation_entry.h:
// cache, scheduler, metrics); the client polls its status and downloads the result once.
//
// Held in memory, per API key: a document and its translation live until downloaded, or an hour
// after the upload; at most `max_documents_per_key` are held per key (456 past it, as DeepL's
// quota answer). A document's id and key are random; both are needed to read it.
//
// Thread safety: every member may be called concurrently; the translation ends on the
// scheduler's threads.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "proto/translate.pb.h"
#include "server/call_record.h"
#include "server/status.h"

namespace rpt::server {

struct DeepLDocumentLimits {
  std::size_t max_documents_per_key = 20;
  std::chrono::seconds lifetime{3600};
};

class DeepLDocuments {
 public:
  explicit DeepLDocuments(ServiceContext& service, DeepLDocumentLimits limits = {})
      : service_(service), limits_(limits) {}
  ~DeepLDocuments();

  struct Handle {
    std::string id;
    std::string key;
  };
  // Validates and queues `request` (one text: the file's contents); its errors now (400, 429,
  // ...), else the handle. `content_type` is the result's; `characters` what the key is billed.
  RequestStatus start(const std::string& api_key, const v1::TranslateRequest& request,
                      std::string content_type, long long characters, Handle* handle);

  struct Status {
    std::string state;  // "queued", "translating", "done", "error"
    std::string error;  // with "error"
    long long billed_characters = 0;
  };
  // NOT_FOUND for an unknown id, or a document key that is not its.
  RequestStatus status(const std::string& api_key, const Handle& handle, Status* out);

  // The translated file, once (it is then forgotten); UNAVAILABLE ("Document not ready.", 503 as
  // DeepL's) while not done, the translation's error when it failed.
  RequestStatus take_result(const std::string& api_key, const Handle& handle, std::string* bytes,
                            std::string* content_type);

 private:
  class Job;
  void forget_expired();  // holds mutex_

  ServiceContext& service_;
  const DeepLDocumentLimits limits_;
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<Job>> jobs_;  // by document id
};

}  // namespace rpt::server
