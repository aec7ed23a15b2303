// DeepL's API (v2 subset), what Weblate, Poedit, OmegaT, Trados plugins and DeepL's own client
// libraries call, over the same shared path as rpt's own API (docs/compatible-apis.md):
//
//   POST /v2/translate        text (repeated or an array), target_lang, source_lang,
//                             split_sentences (0|1|nonewlines), preserve_formatting,
//                             tag_handling (xml|html), tag_handling_version (v1|v2: v2 refuses
//                             XML that is not well-formed as it stands), ignore_tags,
//                             glossary_id, formality; a form or JSON
//   GET  /v2/languages        type=source|target: [{"language": "DE", "name": "German", ...}]
//   GET  /v2/usage            {"character_count", "character_limit"} of the caller's key
//   GET  /v2/glossary-language-pairs
//   POST /v2/document         a file (.txt, .html, .xml, .xlf, .po: multipart) translated in
//                             the background; POST /v2/document/{id} its status,
//                             /v2/document/{id}/result the translated file, once
//   POST /v2/glossaries       create from TSV entries; GET lists them, GET/DELETE
//                             /v2/glossaries/{id}, GET /v2/glossaries/{id}/entries (TSV)
//
// Every call carries `Authorization: DeepL-Auth-Key KEY` (or the form field auth_key); glossaries
// and usage are kept per key (server/deepl_accounts.h). Until rpt has API keys of its own, any
// key is accepted: keys separate clients, they do not admit them. Language codes are DeepL's,
// upper case, with regional variants (EN-US, PT-BR) mapped onto the served models' languages.
// Answers and errors in DeepL's shapes: {"translations": [{"detected_source_language", "text",
// "billed_characters", with tag handling "tag_handling_version"}]}, {"message": "..."} with 400,
// 403, 404, 413, 429 (Retry-After), 500, 503, 504.
//
// Thread safety: handle() is called from the HTTP server's threads concurrently.
#pragma once

#include <string>
#include <vector>

#include "server/call_record.h"
#include "server/deepl_accounts.h"
#include "server/deepl_documents.h"
#include "server/http_fields.h"
#include "server/http_server.h"

namespace rpt::server {

// The request's fields, however sent: a JSON object (arrays repeat a name, true/false are 1/0),
// a form or multipart body (its files apart), and the query string (GET /v2/languages?type=
// target; DeepL's clients also send GET fields as a form body). INVALID_ARGUMENT for bad JSON.
RequestStatus read_deepl_fields(const HttpRequest& request, FormFields* fields);

// A glossary's "source<TAB>target" lines (blank lines skipped) into entries; INVALID_ARGUMENT
// naming the first line that is not one. The terms are checked later, as a call's glossary.
RequestStatus read_glossary_entries(const std::string& tsv, std::vector<GlossaryEntry>* entries);

class DeepLApi {
 public:
  explicit DeepLApi(ServiceContext& service) : service_(service), documents_(service) {}

  // Answers a request whose path starts with /v2/.
  void handle(const HttpRequest& request, HttpResponder respond);

 private:
  HttpResponse create_glossary(const std::string& key, const FormFields& fields);
  HttpResponse upload_document(const HttpRequest& request, const std::string& key,
                               const FormFields& fields);

  ServiceContext& service_;
  DeepLAccounts accounts_;
  DeepLDocuments documents_;
};

}  // namespace rpt::server
