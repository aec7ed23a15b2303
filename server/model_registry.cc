#include "server/model_registry.h"

#include <algorithm>
#include <string_view>
#include <utility>

#include <spdlog/spdlog.h>

#include "engine/device.h"
#include "server/glossary_store.h"
#include "server/system_memory.h"

namespace rpt::server {
namespace {

// "en-de (en->de)", "t5 (en->de, en->fr, en->ro)"; a long list cut short.
std::string loaded_name(const ServedModel& served) {
  constexpr std::size_t kMostPairs = 4;
  const std::vector<LanguagePair>& pairs = served.model->language_pairs();
  std::string name = served.name + " (";
  for (std::size_t i = 0; i < pairs.size() && i < kMostPairs; ++i) {
    name += (i == 0 ? "" : ", ") + pairs[i].name();
  }
  if (pairs.size() > kMostPairs) name += ", ... " + std::to_string(pairs.size()) + " pairs";
  return name + ")";
}

std::string asked_pair(const ModelQuery& query) {
  return (query.source_language.empty() ? "*" : echoed_text(query.source_language)) + "->" +
         (query.target_language.empty() ? "*" : echoed_text(query.target_language));
}

// "name one with model, or choose with source_language and target_language".
std::string how_to_choose(const SelectorFields& fields) {
  const std::string languages =
      std::string(fields.source_language) + " and " + std::string(fields.target_language);
  if (fields.model.empty()) return "choose with " + languages;
  return "name one with " + std::string(fields.model) + ", or choose with " + languages;
}

// `query` with its languages as the served ones spell them (served_spelling); a language none
// serves stays as asked, for the message.
ModelQuery with_served_languages(ModelQuery query, const ModelCatalog& catalog) {
  for (auto [code, served] : {std::pair(&query.source_language, &catalog.source_languages),
                              std::pair(&query.target_language, &catalog.target_languages)}) {
    if (std::string spelled = served_spelling(*code, *served); !spelled.empty()) {
      *code = std::move(spelled);
    }
  }
  return query;
}

// "fr", "pt-BR", "zh_Hant": what a language code looks like (BCP 47's shape, loosely). A request's
// source names a pair's sentence rules only then: ICU makes an iterator per name it is given.
bool looks_like_language_code(std::string_view code) {
  if (code.size() < 2 || code.size() > 35) return false;
  for (std::size_t i = 0; i < code.size(); ++i) {
    const char c = code[i];
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    const bool digit = c >= '0' && c <= '9';
    const bool separator = (c == '-' || c == '_') && i >= 2 && i + 1 < code.size();
    if (!letter && !(digit && i >= 2) && !separator) return false;
  }
  return true;
}

// `served` with the one of `found` (indexes of its pairs that serve `query` equally well).
RequestStatus route_to_pair(const std::shared_ptr<ServedModel>& served, const ModelQuery& query,
                            const std::vector<std::size_t>& found, ModelRoute* route) {
  const std::vector<LanguagePair>& pairs = served->model->language_pairs();
  if (found.empty()) {
    return {StatusCode::kNotFound,
            "model " + loaded_name(*served) + " does not translate " + asked_pair(query)};
  }
  if (found.size() > 1) {
    return {StatusCode::kInvalidArgument, "model " + loaded_name(*served) + " serves several " +
                                              "language pairs for " + asked_pair(query) + "; " +
                                              what_to_name(pairs, found)};
  }
  const LanguagePair& pair = pairs[found.front()];
  std::string source = pair.source;
  if (pair.reads_any_source()) {
    source = looks_like_language_code(query.source_language) ? query.source_language : "";
  }
  *route = {.model = served, .pair = {.index = found.front(), .source_language = source}};
  return RequestStatus::Ok();
}

// --device-memory-limit in bytes, its default resolved (see ServerOptions).
std::size_t memory_limit_bytes(const ServerOptions& options, Device device) {
  if (options.compute.memory_limit_mib >= 0) {
    return static_cast<std::size_t>(options.compute.memory_limit_mib * 1048576.0);
  }
  if (device != Device::kCpu) return 0;
  const std::size_t limit =
      available_memory_bytes() / 2 / std::max<std::size_t>(1, options.models.size());
  spdlog::info(
      "CPU decoding state limited to {} MiB per model (half the memory available, "
      "split among {} models; --device-memory-limit sets it)",
      limit >> 20, options.models.size());
  return limit;
}

}  // namespace

int served_input_limit(const Model& model, int limit) {
  return std::min(limit, model.max_sequence_length() - model.max_added_source_ids());
}

std::shared_ptr<const NamedGlossaries> GlossaryShelf::get() const {
  const std::lock_guard lock(mutex_);
  return glossaries_;
}

void GlossaryShelf::put(const std::string& name, std::shared_ptr<const Glossary> glossary) {
  const std::lock_guard lock(mutex_);
  auto next = std::make_shared<NamedGlossaries>(*glossaries_);
  (*next)[name] = std::move(glossary);
  glossaries_ = std::move(next);
}

bool GlossaryShelf::remove(const std::string& name) {
  const std::lock_guard lock(mutex_);
  if (!glossaries_->count(name)) return false;
  auto next = std::make_shared<NamedGlossaries>(*glossaries_);
  next->erase(name);
  glossaries_ = std::move(next);
  return true;
}

ModelRegistry::ModelRegistry(const ServerOptions& options, Metrics& metrics)
    : options_(options), metrics_(metrics) {
  std::map<std::string, std::shared_ptr<const Glossary>> files;  // each file read once
  for (const GlossarySpec& spec : options.glossaries) {
    if (!files.count(spec.path)) {
      files.emplace(spec.path, std::make_shared<const Glossary>(Glossary::load(spec.path)));
    }
  }
  std::vector<std::shared_ptr<ServedModel>> models;
  for (const ModelSpec& spec : options.models) {
    std::shared_ptr<ServedModel> served = make_served(spec);
    for (const GlossarySpec& glossary : options.glossaries) {
      if (!glossary.model.empty() && glossary.model != spec.name) continue;
      const auto& loaded = files.at(glossary.path);
      served->span_protector->check_glossary(*loaded, glossary.path + " entry");
      served->glossaries.put(glossary.name, loaded);
      if (glossary.model.empty()) every_model_glossaries_.put(glossary.name, loaded);
      metrics.add_glossary(spec.name, glossary.name, loaded->size());
      spdlog::info("model {}: glossary {} ({} entries) from {}", spec.name, glossary.name,
                   loaded->size(), glossary.path);
    }
    models.push_back(std::move(served));
  }
  publish(std::move(models));
  if (!options.glossary_dir.empty()) {
    for (StoredGlossary& stored : read_stored_glossaries(options.glossary_dir)) {
      const RequestStatus kept = put_glossary(stored.model, stored.name, stored.glossary);
      if (!kept.ok()) {
        spdlog::warn("glossary {} from {} not served: {}", stored.name, stored.path, kept.message);
      }
    }
  }
}

ModelRegistry::~ModelRegistry() = default;

std::shared_ptr<ServedModel> ModelRegistry::make_served(const ModelSpec& spec) {
  const Device device = options_.compute.device;
  const ComputeOptions compute =
      options_.compute.compute_options(spec.precision, memory_limit_bytes(options_, device));
  auto served = std::make_shared<ServedModel>();
  served->name = spec.name;
  served->directory = spec.directory;
  // The engine holds the only reference to the model: a GPU engine frees its host weights.
  served->engine = Engine::create(
      Model::load(spec.directory, {.int8 = compute.precision == kernels::Precision::kInt8,
                                   .cpu_layout = compute.device == Device::kCpu}),
      compute);
  served->model = served->engine->shared_model();
  const ModelConfig& config = served->model->config();
  const bool on_gpu = compute.device == Device::kCuda;
  served->description = {
      .name = spec.name,
      .source_language = config.source_language,
      .target_language = config.target_language,
      .device = std::string(device_name(compute.device)),
      .dtype = on_gpu || served->model->int8()
                   ? std::string(kernels::precision_name(compute.precision))
                   : served->model->stored_dtype(),
      .position_type = position_type_name(config.position.type),
      .weights_bytes = static_cast<double>(on_gpu ? served->engine->device_memory_bytes()
                                                  : served->model->weights_bytes())};
  served->span_protector = std::make_shared<const SpanProtector>(served->model);
  served->max_input_length = served_input_limit(*served->model, options_.limits.max_input_length);
  served->scheduler = std::make_unique<Scheduler>(spec.name, served->engine, options_.scheduler,
                                                  metrics_.add_model(served->description));
  if (options_.cache_size_mib > 0) {
    served->cache = std::make_unique<TranslationCache>(
        TranslationCacheOptions{.max_bytes =
                                    static_cast<std::size_t>(options_.cache_size_mib * (1 << 20))},
        metrics_.add_cache(spec.name));
  }
  served->glossary_method = options_.text.glossary_method;
  spdlog::info("loaded model {} ({}, {}, {} MiB) from {} on {} in {:.2f} s", loaded_name(*served),
               served->description.position_type, served->description.dtype,
               static_cast<long>(served->description.weights_bytes) >> 20, spec.directory,
               served->engine->device_description(), served->model->load_phases().total);
  return served;
}

namespace {

void add_once(const std::string& language, std::vector<std::string>* languages) {
  if (!language.empty() &&
      std::find(languages->begin(), languages->end(), language) == languages->end()) {
    languages->push_back(language);
  }
}

}  // namespace

void ModelRegistry::publish(std::vector<std::shared_ptr<ServedModel>> models) {
  auto catalog = std::make_shared<ModelCatalog>();
  catalog->models = std::move(models);
  bool any_source = false;
  for (const auto& served : catalog->models) {
    for (const LanguagePair& pair : served->model->language_pairs()) {
      if (pair.reads_any_source()) {
        any_source = true;
      } else {
        add_once(pair.source, &catalog->languages);
      }
      add_once(pair.target, &catalog->languages);
    }
  }
  std::sort(catalog->languages.begin(), catalog->languages.end());
  for (const auto& served : catalog->models) {
    for (const LanguagePair& pair : served->model->language_pairs()) {
      if (!pair.reads_any_source()) add_once(pair.source, &catalog->source_languages);
      add_once(pair.target, &catalog->target_languages);
    }
  }
  // After the models' own sources, so that their order leads.
  if (any_source) {
    for (const std::string& language : catalog->languages) {
      add_once(language, &catalog->source_languages);
    }
  }
  const std::lock_guard lock(catalog_mutex_);
  catalog_ = std::move(catalog);
}

std::shared_ptr<const ModelCatalog> ModelRegistry::catalog() const {
  const std::lock_guard lock(catalog_mutex_);
  return catalog_;
}

void ModelRegistry::for_each_direction(
    const std::function<void(const std::string& source, const std::string& target)>& each) const {
  const std::shared_ptr<const ModelCatalog> now = catalog();
  for (const auto& served : now->models) {
    for (const LanguagePair& pair : served->model->language_pairs()) {
      if (!pair.reads_any_source()) {
        each(pair.source, pair.target);
        continue;
      }
      for (const std::string& source : now->languages) {
        if (source != pair.target) each(source, pair.target);
      }
    }
  }
}

RequestStatus ModelRegistry::find(const ModelQuery& asked, ModelRoute* found) const {
  *found = {};
  const std::shared_ptr<const ModelCatalog> now = catalog();
  const ModelQuery query = with_served_languages(asked, *now);
  const std::vector<std::shared_ptr<ServedModel>>& models = now->models;
  std::string loaded;
  for (const auto& served : models) {
    loaded += (loaded.empty() ? "" : ", ") + loaded_name(*served);
  }
  const LanguageQuery languages{query.source_language, query.target_language};
  if (!query.name.empty()) {
    for (const auto& served : models) {
      if (served->name != query.name) continue;
      // One pair: the languages are ignored, as before models had several.
      if (served->model->language_pairs().size() == 1) {
        return route_to_pair(served, query, {0}, found);
      }
      return route_to_pair(served, query,
                           matching_pairs(served->model->language_pairs(), languages), found);
    }
    return {StatusCode::kNotFound,
            "no model named '" + echoed_text(query.name) + "'; loaded: " + loaded};
  }
  // The models with pairs that serve the query best, and those pairs.
  std::vector<std::pair<std::shared_ptr<ServedModel>, std::vector<std::size_t>>> matches;
  PairMatch best = PairMatch::kNone;
  for (const auto& served : models) {
    const std::vector<LanguagePair>& pairs = served->model->language_pairs();
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      const PairMatch match = match_pair(pairs[i], languages);
      if (match == PairMatch::kNone || match < best) continue;
      if (match > best) matches.clear();
      best = match;
      if (matches.empty() || matches.back().first != served) {
        matches.emplace_back(served, std::vector<std::size_t>());
      }
      matches.back().second.push_back(i);
    }
  }
  if (matches.size() == 1) {
    return route_to_pair(matches.front().first, query, matches.front().second, found);
  }
  if (matches.empty()) {
    return {StatusCode::kNotFound,
            "no model translates " + asked_pair(query) + "; loaded: " + loaded};
  }
  return {StatusCode::kInvalidArgument, "several models match " + asked_pair(query) + "; " +
                                            how_to_choose(query.fields) + " (loaded: " + loaded +
                                            ")"};
}

void ModelRegistry::stop() {
  for (const auto& served : catalog()->models) served->scheduler->stop();
  stopping_.store(true);  // an admin drain stops waiting (its model goes to retired_)
  const std::lock_guard lock(retired_mutex_);
  for (const auto& served : retired_) served->scheduler->stop();
}

}  // namespace rpt::server
