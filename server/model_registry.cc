#include "server/model_registry.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "engine/device.h"
#include "server/system_memory.h"

namespace rpt::server {
namespace {

std::string pair_name(const ServedModel& served) {
  return served.description.source_language + "->" + served.description.target_language;
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

ModelRegistry::ModelRegistry(const ServerOptions& options, Metrics& metrics) {
  const Device device = options.compute.device;
  std::map<std::string, std::shared_ptr<const Glossary>> files;  // each file read once
  for (const GlossarySpec& spec : options.glossaries) {
    if (!files.count(spec.path)) {
      files.emplace(spec.path, std::make_shared<const Glossary>(Glossary::load(spec.path)));
    }
  }
  for (const ModelSpec& spec : options.models) {
    const ComputeOptions compute =
        options.compute.compute_options(spec.precision, memory_limit_bytes(options, device));
    auto served = std::make_unique<ServedModel>();
    served->name = spec.name;
    served->model =
        Model::load(spec.directory, {.int8 = compute.precision == kernels::Precision::kInt8,
                                     .cpu_layout = compute.device == Device::kCpu});
    served->engine = Engine::create(served->model, compute);
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
    served->max_input_length =
        std::min(options.limits.max_input_length, served->model->max_sequence_length());
    served->scheduler = std::make_unique<Scheduler>(spec.name, served->engine, options.scheduler,
                                                    metrics.add_model(served->description));
    if (options.cache_size_mib > 0) {
      served->cache = std::make_unique<TranslationCache>(
          TranslationCacheOptions{.max_bytes =
                                      static_cast<std::size_t>(options.cache_size_mib * (1 << 20))},
          metrics.add_cache(spec.name));
    }
    served->glossary_method = options.text.glossary_method;
    for (const GlossarySpec& glossary : options.glossaries) {
      if (!glossary.model.empty() && glossary.model != spec.name) continue;
      const auto& loaded = files.at(glossary.path);
      served->span_protector->check_glossary(*loaded, glossary.path + " entry");
      served->glossaries.emplace(glossary.name, loaded);
      metrics.add_glossary(spec.name, glossary.name, loaded->size());
      spdlog::info("model {}: glossary {} ({} entries) from {}", spec.name, glossary.name,
                   loaded->size(), glossary.path);
    }
    spdlog::info("loaded model {} ({} -> {}, {}, {}, {} MiB) from {} on {}", spec.name,
                 config.source_language, config.target_language, served->description.position_type,
                 served->description.dtype,
                 static_cast<long>(served->description.weights_bytes) >> 20, spec.directory,
                 served->engine->device_description());
    models_.push_back(std::move(served));
  }
}

RequestStatus ModelRegistry::find(const ModelQuery& query, ServedModel** found) {
  *found = nullptr;
  std::string loaded;
  for (const auto& served : models_) {
    loaded += (loaded.empty() ? "" : ", ") + served->name + " (" + pair_name(*served) + ")";
  }
  if (!query.name.empty()) {
    for (const auto& served : models_) {
      if (served->name == query.name) {
        *found = served.get();
        return RequestStatus::Ok();
      }
    }
    return {StatusCode::kNotFound,
            "no model named '" + echoed_text(query.name) + "'; loaded: " + loaded};
  }
  std::vector<ServedModel*> matches;
  for (const auto& served : models_) {
    const ModelDescription& d = served->description;
    if ((query.source_language.empty() || d.source_language == query.source_language) &&
        (query.target_language.empty() || d.target_language == query.target_language)) {
      matches.push_back(served.get());
    }
  }
  if (matches.size() == 1) {
    *found = matches.front();
    return RequestStatus::Ok();
  }
  const std::string asked =
      (query.source_language.empty() ? "*" : echoed_text(query.source_language)) + "->" +
      (query.target_language.empty() ? "*" : echoed_text(query.target_language));
  if (matches.empty()) {
    return {StatusCode::kNotFound, "no model translates " + asked + "; loaded: " + loaded};
  }
  return {StatusCode::kInvalidArgument,
          "several models match " + asked + "; name one with model.model (loaded: " + loaded + ")"};
}

void ModelRegistry::stop() {
  for (const auto& served : models_) served->scheduler->stop();
}

}  // namespace rpt::server
