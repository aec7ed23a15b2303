// The admin API's request bodies (server/admin_api.h), read apart from the handler so that they
// are fuzzed (tests/fuzz/admin_body_fuzz.cc) without a server. Nothing here loads or changes.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "engine/glossary.h"
#include "server/server_options.h"
#include "server/status.h"

namespace rpt::server {

// A load (`name` empty: the body's "name") or a replace (`name` from the path):
// {"name", "directory"[, "compute_type"]} into `spec`, the precision the server's default unless
// compute_type names one. INVALID_ARGUMENT naming what is wrong: not a JSON object, an unknown
// field, a field of the wrong type, no directory, a name that is not 1-64 of [A-Za-z0-9._-].
RequestStatus read_model_change(const ServerOptions& options, std::string_view body,
                                const std::string& name, ModelSpec* spec);

// A glossary put: {"entries": [["source", "target"], ...][, "model": M]}. The entries are
// checked as every glossary's are (engine/glossary.h), not yet against a model's vocabulary.
RequestStatus read_glossary_change(std::string_view body, std::string* model,
                                   std::shared_ptr<const Glossary>* glossary);

}  // namespace rpt::server
