// The models one server process serves, each with its scheduler, and request routing by model
// name or language pair.
//
// Thread safety: immutable after construction except through each Scheduler (thread-safe).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine/glossary.h"
#include "engine/model.h"
#include "engine/span_protection.h"
#include "server/metrics.h"
#include "server/scheduler.h"
#include "server/server_options.h"
#include "server/status.h"
#include "server/translation_cache.h"

namespace rpt::server {

struct ServedModel {
  std::string name;
  std::shared_ptr<const Model> model;
  std::shared_ptr<const Engine> engine;  // the model bound to the server's device
  std::shared_ptr<const SpanProtector> span_protector;
  ModelDescription description;
  int max_input_length = 0;  // the server limit, capped by the model's maximum sequence length
  std::unique_ptr<Scheduler> scheduler;
  std::unique_ptr<TranslationCache> cache;  // null with --cache-size 0
  // Named glossaries (--glossary), checked against the model's target vocabulary at start.
  std::map<std::string, std::shared_ptr<const Glossary>> glossaries;
  GlossaryMethod glossary_method = GlossaryMethod::kMask;
};

// What a request asks for; empty fields are unset.
struct ModelQuery {
  std::string name;
  std::string source_language;
  std::string target_language;
};

class ModelRegistry {
 public:
  // Loads every model of `options` (throws rpt::ModelError naming the directory) and its
  // glossaries (InvalidArgument naming the file and line), and starts their schedulers.
  ModelRegistry(const ServerOptions& options, Metrics& metrics);

  // The model `query` selects: by name when given, else by the languages given (a unique match),
  // else the only model. NOT_FOUND (naming what is loaded) or INVALID_ARGUMENT when ambiguous.
  RequestStatus find(const ModelQuery& query, ServedModel** found);

  const std::vector<std::unique_ptr<ServedModel>>& models() const { return models_; }
  // Stops every scheduler (remaining calls finish with UNAVAILABLE).
  void stop();

 private:
  std::vector<std::unique_ptr<ServedModel>> models_;
};

}  // namespace rpt::server
