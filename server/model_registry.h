// The models one server process serves, each with its scheduler, and request routing by model
// name or language pair. Models are loaded at start and, through the admin API
// (server/admin_api.h), loaded, replaced and unloaded while the server runs; named glossaries
// likewise.
//
// Thread safety: every method may be called from any thread. Readers see a consistent catalogue
// (the models and their languages) and hold each model they route to (a shared_ptr) for the
// call: a model replaced or unloaded finishes the calls it has.
#pragma once

#include <functional>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine/glossary.h"
#include "engine/model.h"
#include "engine/span_protection.h"
#include "server/metrics.h"
#include "server/scheduler.h"
#include "server/selector_fields.h"
#include "server/server_options.h"
#include "server/status.h"
#include "server/translation_cache.h"

namespace rpt::server {

using NamedGlossaries = std::map<std::string, std::shared_ptr<const Glossary>>;

// A model's named glossaries, changed while calls read them: each reader gets the set as it was
// (a call keeps the glossary it started with).
class GlossaryShelf {
 public:
  std::shared_ptr<const NamedGlossaries> get() const;
  void put(const std::string& name, std::shared_ptr<const Glossary> glossary);
  bool remove(const std::string& name);  // false if there was none of that name

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<const NamedGlossaries> glossaries_ = std::make_shared<NamedGlossaries>();
};

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
  // Named glossaries (--glossary, the admin API), checked against the model's target vocabulary.
  GlossaryShelf glossaries;
  GlossaryMethod glossary_method = GlossaryMethod::kMask;
  std::string directory;  // where it was loaded from
};

// ServedModel::max_input_length of `model` under the server's `limit` (--max-input-length).
int served_input_limit(const Model& model, int limit);

// What a request asks for; empty fields are unset.
struct ModelQuery {
  std::string name;
  std::string source_language;
  std::string target_language;
  SelectorFields fields = kGrpcSelectorFields;  // how the caller named them
};

// The language pair of a model a request is translated in.
struct ChosenPair {
  std::size_t index = 0;  // into the model's language_pairs()
  // The language the request's texts are in: the pair's source, or where the pair reads any
  // ("*") the one the request named (empty when it named none, or nothing like a language code).
  std::string source_language;
};

// Where a request goes: the model (held for the call) and its pair.
struct ModelRoute {
  std::shared_ptr<ServedModel> model;
  ChosenPair pair;
};

// The models served at one moment and the languages they name.
struct ModelCatalog {
  std::vector<std::shared_ptr<ServedModel>> models;
  // Every language the served pairs name (sources other than "*", and targets; none empty),
  // each once, sorted: the sources a pair that reads any source is listed with.
  std::vector<std::string> languages;
  // The languages the served models read: each pair's source, or for a pair that reads any
  // every one of `languages`; and the languages they write. Each once, in model and pair order,
  // none empty.
  std::vector<std::string> source_languages;
  std::vector<std::string> target_languages;
};

class ModelRegistry {
 public:
  // Loads every model of `options` (throws rpt::ModelError naming the directory) and its
  // glossaries (InvalidArgument naming the file and line), and starts their schedulers.
  // `options` and `metrics` must outlive the registry.
  ModelRegistry(const ServerOptions& options, Metrics& metrics);
  ~ModelRegistry();

  // The model and language pair `query` selects: by name when given (its languages then pick the
  // pair of a model with several, and are ignored otherwise), else every pair of every model
  // matched against the languages given (engine/language_pair.h: "*" reads any source, a pair of
  // the source asked for wins over "*"; a unique match), else the only model's only pair.
  // NOT_FOUND (naming what is loaded) or INVALID_ARGUMENT when ambiguous: several models, or
  // several pairs of one model (naming the languages to choose from, and the query's fields).
  // The query's languages are first read as the served languages spell them (served_spelling:
  // case aside; "en-US" is "en" when no served pair names "en-US"), for every protocol.
  RequestStatus find(const ModelQuery& query, ModelRoute* found) const;

  // The models served now and their languages.
  std::shared_ptr<const ModelCatalog> catalog() const;
  std::vector<std::shared_ptr<ServedModel>> models() const { return catalog()->models; }
  std::vector<std::string> languages() const { return catalog()->languages; }
  std::vector<std::string> source_languages() const { return catalog()->source_languages; }
  std::vector<std::string> target_languages() const { return catalog()->target_languages; }
  // Calls `each` with every (source, target) a served pair translates, in model and pair order,
  // a pair that reads any source once per language of languages() other than its target; a pair
  // with an empty language as it is.
  void for_each_direction(
      const std::function<void(const std::string& source, const std::string& target)>& each) const;

  // While the server runs (the admin API). Each call blocks until done; one at a time.
  // Loads `spec` under its name, warms it (one sentence through its scheduler) and then routes
  // to it. ALREADY_EXISTS when the name is taken; RESOURCE_EXHAUSTED when its weights would not
  // fit (the host's available memory on the CPU, the memory limit or the GPU's free memory);
  // INVALID_ARGUMENT for a directory that is not a model (the loader's message).
  RequestStatus load(const ModelSpec& spec);
  // Loads `spec` as load() does, then routes its name's new calls to it at once; calls in flight
  // finish on the model they started on, which is then unloaded. NOT_FOUND when no model has
  // the name.
  RequestStatus replace(const ModelSpec& spec);
  // Stops routing to the model, waits (up to `drain_seconds`) for its calls in flight to finish,
  // then frees it. NOT_FOUND when no model has the name; FAILED_PRECONDITION for the last model.
  RequestStatus unload(const std::string& name, double drain_seconds = 300);
  // Named glossaries: `glossary` under `name` for `model` (empty: every model), checked against
  // each model's target vocabulary first (INVALID_ARGUMENT naming the entry); replaces one of
  // the same name. remove_glossary: NOT_FOUND when no such glossary is held.
  RequestStatus put_glossary(const std::string& model, const std::string& name,
                             std::shared_ptr<const Glossary> glossary);
  RequestStatus remove_glossary(const std::string& model, const std::string& name);

  // Stops every scheduler (remaining calls finish with UNAVAILABLE).
  void stop();

 private:
  // A loaded, started model (throws as Model::load and Engine::create do).
  std::shared_ptr<ServedModel> make_served(const ModelSpec& spec);
  RequestStatus check_memory(const ModelSpec& spec) const;
  // check_memory, make_served and one warm-up sentence: a model ready to be routed to.
  RequestStatus load_warm(const ModelSpec& spec, std::shared_ptr<ServedModel>* served);
  // Publishes `models` as the new catalogue (languages indexed).
  void publish(std::vector<std::shared_ptr<ServedModel>> models);
  // Waits until only `retired` holds the model, then frees it; false if calls remain after
  // `drain_seconds` (it is then kept in retired_, freed by a later admin call or at stop).
  bool drain(std::shared_ptr<ServedModel>& retired, double drain_seconds);
  void free_drained_retired();

  const ServerOptions& options_;
  Metrics& metrics_;
  std::mutex admin_mutex_;  // one admin change at a time
  mutable std::mutex catalog_mutex_;
  std::shared_ptr<const ModelCatalog> catalog_;
  // Unloaded models whose calls were still in flight; stop() ends a drain that waits.
  std::mutex retired_mutex_;
  std::vector<std::shared_ptr<ServedModel>> retired_;  // guarded by retired_mutex_
  std::atomic<bool> stopping_{false};
  // Glossaries given for every model (--glossary without a model, the admin API without one):
  // a model loaded later gets them too.
  GlossaryShelf every_model_glossaries_;
};

}  // namespace rpt::server
