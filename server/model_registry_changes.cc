// ModelRegistry's changes while the server runs (the admin API): load, replace and unload models,
// put and remove named glossaries. The catalogue is swapped whole; a call holds the model it was
// routed to, so a replaced or unloaded model finishes its calls before it is freed.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "engine/errors.h"
#include "server/glossary_store.h"
#include "server/model_registry.h"
#include "server/system_memory.h"

namespace rpt::server {
namespace {

// Receives the warm-up sentence's end (server/translation_job.h): the scheduler's hand-over
// thread sets it; the admin thread waits on it.
class WarmUpObserver final : public JobObserver {
 public:
  void on_sentence(int, TranslationResult) override {}
  void on_finish(const RequestStatus& status) override { done_.set_value(status); }
  std::future<RequestStatus> result() { return done_.get_future(); }

 private:
  std::promise<RequestStatus> done_;
};

// One short sentence through the new model's scheduler: its decoder backend is made (on a GPU:
// stream, cuBLAS handles, frozen GEMM algorithms) before a call waits for it.
RequestStatus warm_up(ServedModel& served) {
  WarmUpObserver observer;
  std::future<RequestStatus> finished = observer.result();
  auto job = std::make_shared<TranslationJob>();
  const int vocabulary = static_cast<int>(served.model->source_vocabulary().size());
  job->source_ids = {{std::min(5, vocabulary - 1)}};
  job->options.max_length = 4;
  job->observer = &observer;
  RequestStatus queued = served.scheduler->submit(job);
  if (!queued.ok()) return queued;
  return finished.get();  // the scheduler always finishes a queued job
}

// Bytes of the weights file a model directory names (0 when it cannot be read: the loader then
// says why).
std::uintmax_t weights_file_bytes(const std::string& directory) {
  std::error_code error;
  std::string weights = "model.bin";
  std::ifstream config(std::filesystem::path(directory) / "config.json");
  const nlohmann::json parsed = nlohmann::json::parse(config, nullptr, false);
  if (parsed.is_object() && parsed.contains("weights") && parsed["weights"].is_string()) {
    weights = parsed["weights"].get<std::string>();
  }
  const std::uintmax_t bytes =
      std::filesystem::file_size(std::filesystem::path(directory) / weights, error);
  return error ? 0 : bytes;
}

RequestStatus loading_failed(const ModelSpec& spec, const std::exception& error) {
  spdlog::warn("admin: loading model {} from {} failed: {}", spec.name, spec.directory,
               error.what());  // with the source location; the client's message has none
  const std::string reason = client_message(error);
  if (dynamic_cast<const ResourceExhausted*>(&error) != nullptr) {
    return {StatusCode::kResourceExhausted, "model " + spec.name + " does not fit: " + reason};
  }
  if (dynamic_cast<const ModelError*>(&error) != nullptr ||
      dynamic_cast<const InvalidArgument*>(&error) != nullptr) {
    return {StatusCode::kInvalidArgument, "cannot load model " + spec.name + ": " + reason};
  }
  return {StatusCode::kInternal, "loading model " + spec.name + " failed: " + reason};
}

}  // namespace

RequestStatus ModelRegistry::check_memory(const ModelSpec& spec) const {
  if (options_.compute.device != Device::kCpu) return RequestStatus::Ok();  // Engine::create
  // On the CPU the weights are held as float32 (twice a float16 file) or int8 with their float32
  // companions: twice the file is the bound to check against what the host has free.
  const std::uintmax_t needed = 2 * weights_file_bytes(spec.directory);
  const std::size_t available = available_memory_bytes();
  if (needed > available) {
    return {StatusCode::kResourceExhausted, "model " + spec.name + " needs about " +
                                                std::to_string(needed >> 20) +
                                                " MiB for its weights; the host has " +
                                                std::to_string(available >> 20) + " MiB available"};
  }
  return RequestStatus::Ok();
}

RequestStatus ModelRegistry::load_warm(const ModelSpec& spec,
                                       std::shared_ptr<ServedModel>* served) {
  if (RequestStatus fits = check_memory(spec); !fits.ok()) return fits;
  try {
    *served = make_served(spec);
  } catch (const std::exception& error) {
    return loading_failed(spec, error);
  }
  if (RequestStatus warmed = warm_up(**served); !warmed.ok()) {
    (*served)->scheduler->stop();
    return {StatusCode::kInternal,
            "model " + spec.name + " failed its first translation: " + warmed.message};
  }
  return RequestStatus::Ok();
}

RequestStatus ModelRegistry::load(const ModelSpec& spec) {
  const std::lock_guard admin(admin_mutex_);
  free_drained_retired();
  for (const auto& served : catalog()->models) {
    if (served->name == spec.name) {
      return {StatusCode::kAlreadyExists, "a model named '" + spec.name + "' is loaded"};
    }
  }
  std::shared_ptr<ServedModel> served;
  if (RequestStatus ready = load_warm(spec, &served); !ready.ok()) return ready;
  for (const auto& [name, glossary] : *every_model_glossaries_.get()) {
    try {
      served->span_protector->check_glossary(*glossary, "glossary " + name + " entry");
      served->glossaries.put(name, glossary);
      metrics_.add_glossary(spec.name, name, glossary->size());
    } catch (const std::exception& error) {
      spdlog::warn("admin: model {} does not serve glossary {}: {}", spec.name, name, error.what());
    }
  }
  std::vector<std::shared_ptr<ServedModel>> models = catalog()->models;
  models.push_back(std::move(served));
  publish(std::move(models));
  spdlog::info("admin: model {} loaded from {}", spec.name, spec.directory);
  return RequestStatus::Ok();
}

RequestStatus ModelRegistry::replace(const ModelSpec& spec) {
  const std::lock_guard admin(admin_mutex_);
  free_drained_retired();
  std::vector<std::shared_ptr<ServedModel>> models = catalog()->models;
  const auto old = std::find_if(models.begin(), models.end(),
                                [&](const auto& served) { return served->name == spec.name; });
  if (old == models.end()) {
    return {StatusCode::kNotFound, "no model named '" + spec.name + "' to replace"};
  }
  std::shared_ptr<ServedModel> served;
  if (RequestStatus ready = load_warm(spec, &served); !ready.ok()) return ready;
  // The named glossaries carry over, checked against the new target vocabulary.
  for (const auto& [name, glossary] : *(*old)->glossaries.get()) {
    try {
      served->span_protector->check_glossary(*glossary, "glossary " + name + " entry");
    } catch (const std::exception& error) {
      served->scheduler->stop();
      return {StatusCode::kFailedPrecondition,
              "the new model cannot serve glossary " + name + ": " + client_message(error)};
    }
    served->glossaries.put(name, glossary);
  }
  std::shared_ptr<ServedModel> retired = std::move(*old);
  *old = std::move(served);
  publish(std::move(models));
  spdlog::info("admin: model {} replaced by {} (was {})", spec.name, spec.directory,
               retired->directory);
  drain(retired, 300);
  return RequestStatus::Ok();
}

RequestStatus ModelRegistry::unload(const std::string& name, double drain_seconds) {
  const std::lock_guard admin(admin_mutex_);
  free_drained_retired();
  std::vector<std::shared_ptr<ServedModel>> models = catalog()->models;
  const auto found = std::find_if(models.begin(), models.end(),
                                  [&](const auto& served) { return served->name == name; });
  if (found == models.end()) return {StatusCode::kNotFound, "no model named '" + name + "'"};
  if (models.size() == 1) {
    return {StatusCode::kFailedPrecondition,
            "model " + name + " is the only one loaded; load another first (or replace it)"};
  }
  std::shared_ptr<ServedModel> retired = std::move(*found);
  models.erase(found);
  publish(std::move(models));
  if (!drain(retired, drain_seconds)) {
    return {StatusCode::kDeadlineExceeded,
            "model " + name +
                " no longer takes calls; some still run and it is freed when they "
                "end"};
  }
  spdlog::info("admin: model {} unloaded", name);
  return RequestStatus::Ok();
}

bool ModelRegistry::drain(std::shared_ptr<ServedModel>& retired, double drain_seconds) {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(drain_seconds));
  // Every other holder is a call routed before the catalogue changed: none can appear now.
  while (retired.use_count() > 1 && std::chrono::steady_clock::now() < deadline &&
         !stopping_.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (retired.use_count() > 1) {
    const std::lock_guard lock(retired_mutex_);
    if (stopping_.load()) retired->scheduler->stop();  // stop() may have passed retired_ already
    retired_.push_back(std::move(retired));
    return false;
  }
  retired.reset();  // stops its scheduler and frees its weights here, on the admin thread
  return true;
}

void ModelRegistry::free_drained_retired() {
  std::vector<std::shared_ptr<ServedModel>> drained;  // freed outside the lock
  {
    const std::lock_guard lock(retired_mutex_);
    for (auto& served : retired_) {
      if (served.use_count() == 1) drained.push_back(std::move(served));
    }
    std::erase(retired_, nullptr);
  }
}

RequestStatus ModelRegistry::put_glossary(const std::string& model, const std::string& name,
                                          std::shared_ptr<const Glossary> glossary) {
  const std::shared_ptr<const ModelCatalog> now = catalog();
  std::vector<ServedModel*> targets;
  for (const auto& served : now->models) {
    if (model.empty() || served->name == model) targets.push_back(served.get());
  }
  if (targets.empty()) return {StatusCode::kNotFound, "no model named '" + model + "'"};
  for (ServedModel* served : targets) {
    try {
      served->span_protector->check_glossary(*glossary, "entry");
    } catch (const std::exception& error) {
      return {StatusCode::kInvalidArgument,
              "glossary " + name + " for model " + served->name + ": " + client_message(error)};
    }
  }
  for (ServedModel* served : targets) {
    served->glossaries.put(name, glossary);
    metrics_.add_glossary(served->name, name, glossary->size());
  }
  if (model.empty()) every_model_glossaries_.put(name, glossary);
  return RequestStatus::Ok();
}

RequestStatus ModelRegistry::remove_glossary(const std::string& model, const std::string& name) {
  bool removed = model.empty() && every_model_glossaries_.remove(name);
  for (const auto& served : catalog()->models) {
    if (!model.empty() && served->name != model) continue;
    if (served->glossaries.remove(name)) {
      removed = true;
      metrics_.add_glossary(served->name, name, 0);
    }
  }
  if (!removed) {
    return {StatusCode::kNotFound,
            "no glossary named '" + name + "'" + (model.empty() ? "" : " for model " + model)};
  }
  return RequestStatus::Ok();
}

}  // namespace rpt::server
