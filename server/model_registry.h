// The models one server process serves, each with its scheduler, and request routing by model
// name or language pair.
//
// Thread safety: immutable after construction except through each Scheduler (thread-safe).
#pragma once

#include <functional>
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
  ModelDescription description;  // its languages: the model's first (default) pair
  // Most tokens of a segment's own (its pair's prefix and the eos aside): the server limit,
  // capped so that they and the longest prefix and eos fit the model's maximum sequence length.
  int max_input_length = 0;
  std::unique_ptr<Scheduler> scheduler;
  std::unique_ptr<TranslationCache> cache;  // null with --cache-size 0
  // Named glossaries (--glossary), checked against the model's target vocabulary at start.
  std::map<std::string, std::shared_ptr<const Glossary>> glossaries;
  GlossaryMethod glossary_method = GlossaryMethod::kMask;
};

// ServedModel::max_input_length of `model` under the server's `limit` (--max-input-length).
int served_input_limit(const Model& model, int limit);

// What a request asks for; empty fields are unset.
struct ModelQuery {
  std::string name;
  std::string source_language;
  std::string target_language;
};

// The language pair of a model a request is translated in.
struct ChosenPair {
  std::size_t index = 0;  // into the model's language_pairs()
  // The language the request's texts are in: the pair's source, or where the pair reads any
  // ("*") the one the request named (empty when it named none, or nothing like a language code).
  std::string source_language;
};

// Where a request goes: the model and its pair.
struct ModelRoute {
  ServedModel* model = nullptr;
  ChosenPair pair;
};

class ModelRegistry {
 public:
  // Loads every model of `options` (throws rpt::ModelError naming the directory) and its
  // glossaries (InvalidArgument naming the file and line), and starts their schedulers.
  ModelRegistry(const ServerOptions& options, Metrics& metrics);

  // The model and language pair `query` selects: by name when given (its languages then pick the
  // pair of a model with several, and are ignored otherwise), else every pair of every model
  // matched against the languages given (engine/language_pair.h: "*" reads any source, a pair of
  // the source asked for wins over "*"; a unique match), else the only model's only pair.
  // NOT_FOUND (naming what is loaded) or INVALID_ARGUMENT when ambiguous: several models, or
  // several pairs of one model (naming the languages to choose from).
  RequestStatus find(const ModelQuery& query, ModelRoute* found);

  const std::vector<std::unique_ptr<ServedModel>>& models() const { return models_; }

  // Every language the served pairs name (sources other than "*", and targets; none empty),
  // each once, sorted: the sources a pair that reads any source is listed with.
  const std::vector<std::string>& languages() const { return languages_; }
  // The languages the served models read: each pair's source, or for a pair that reads any
  // every one of languages(); and the languages they write. Each once, in model and pair order,
  // none empty.
  const std::vector<std::string>& source_languages() const { return source_languages_; }
  const std::vector<std::string>& target_languages() const { return target_languages_; }
  // Calls `each` with every (source, target) a served pair translates, in model and pair order,
  // a pair that reads any source once per language of languages() other than its target; a pair
  // with an empty language as it is.
  void for_each_direction(
      const std::function<void(const std::string& source, const std::string& target)>& each) const;

  // Stops every scheduler (remaining calls finish with UNAVAILABLE).
  void stop();

 private:
  void index_languages();  // languages_, source_languages_, target_languages_ from models_

  std::vector<std::unique_ptr<ServedModel>> models_;
  std::vector<std::string> languages_;
  std::vector<std::string> source_languages_;
  std::vector<std::string> target_languages_;
};

}  // namespace rpt::server
