#include "server/admin_api.h"

#include <stdexcept>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "common/key_file.h"
#include "server/admin_requests.h"
#include "server/glossary_store.h"
#include "server/http_translate_call.h"
#include "server/json_request.h"

namespace rpt::server {
namespace {

constexpr std::size_t kShortestKey = 16;

HttpResponse error_answer(const RequestStatus& status) {
  // A model that does not fit is no "retry later" (429): 507, Insufficient Storage.
  const int http_status =
      status.code == StatusCode::kResourceExhausted ? 507 : to_http_status(status.code);
  HttpResponse answer = json_response(http_status, json_error(status));
  if (status.code == StatusCode::kUnauthenticated) {
    answer.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"rpt admin\"");
  }
  return answer;
}

HttpResponse json_answer(int status, const nlohmann::json& body) {
  return json_response(status, body.dump() + "\n");
}

nlohmann::json describe(const ServedModel& served) {
  nlohmann::json pairs = nlohmann::json::array();
  for (const LanguagePair& pair : served.model->language_pairs()) {
    pairs.push_back({{"source", pair.source}, {"target", pair.target}});
  }
  nlohmann::json glossaries = nlohmann::json::array();
  for (const auto& [name, glossary] : *served.glossaries.get()) {
    glossaries.push_back({{"name", name}, {"entries", glossary->size()}});
  }
  return {{"name", served.name},
          {"directory", served.directory},
          {"device", served.description.device},
          {"dtype", served.description.dtype},
          {"language_pairs", pairs},
          {"glossaries", glossaries}};
}

nlohmann::json describe_model(const ModelRegistry& registry, const std::string& name) {
  for (const auto& served : registry.models()) {
    if (served->name == name) return describe(*served);
  }
  return nlohmann::json::object();
}

// "/admin/models/NAME" -> NAME ("" for "/admin/models").
std::string path_name(const std::string& path, const std::string& prefix) {
  if (path.size() <= prefix.size() + 1) return {};
  return path.substr(prefix.size() + 1);
}

std::string query_value(const HttpRequest& request, const std::string& name) {
  for (const auto& [key, value] : request.query) {
    if (key == name) return value;
  }
  return {};
}

}  // namespace

void AdminApi::load_key(const std::string& path) {
  const std::string key = read_key_file(path);
  if (key.size() < kShortestKey) {
    throw std::runtime_error(path + ": the admin key must be at least " +
                             std::to_string(kShortestKey) + " characters");
  }
  const std::lock_guard lock(key_mutex_);
  key_ = key_digest(key);
}

std::optional<RequestStatus> AdminApi::refuse(const HttpRequest& request) const {
  const std::string presented = bearer_token(request);
  const std::lock_guard lock(key_mutex_);
  if (!key_.has_value()) {
    return RequestStatus{StatusCode::kPermissionDenied,
                         "the admin API is off: start rpt-server with --admin-key-file"};
  }
  if (presented.empty()) {
    return RequestStatus{StatusCode::kUnauthenticated,
                         "the admin API asks for Authorization: Bearer ADMIN_KEY"};
  }
  if (key_digest(presented) != *key_) {
    spdlog::warn("admin API: refused {} {} with {}", request.method, request.path,
                 key_label(presented));
    return RequestStatus{StatusCode::kPermissionDenied, "not the admin key"};
  }
  return std::nullopt;
}

void AdminApi::run_change(const HttpResponder& respond, std::function<HttpResponse()> change) {
  if (service_.draining.load()) {
    return respond(error_answer({StatusCode::kUnavailable, "the server is shutting down"}));
  }
  service_.in_flight.fetch_add(1);
  worker_.post([this, respond, change = std::move(change)] {
    HttpResponse answer;
    try {
      answer = change();
    } catch (const std::exception& error) {
      answer = error_answer({StatusCode::kInternal, client_message(error)});
    }
    respond(std::move(answer));
    service_.in_flight.fetch_sub(1);
  });
}

bool AdminApi::handle(const HttpRequest& request, const HttpResponder& respond) {
  const std::string& path = request.path;
  if (path != "/admin" && !path.starts_with("/admin/")) return false;
  if (std::optional<RequestStatus> refused = refuse(request)) {
    respond(error_answer(*refused));
    return true;
  }
  ModelRegistry& registry = service_.registry;
  const ServerOptions& options = service_.options;
  const std::string& method = request.method;
  if (path == "/admin/models" && method == "GET") {
    nlohmann::json models = nlohmann::json::array();
    for (const auto& served : registry.models()) models.push_back(describe(*served));
    respond(json_answer(200, {{"models", models}}));
    return true;
  }
  if (path == "/admin/glossaries" && method == "GET") {
    nlohmann::json glossaries = nlohmann::json::array();
    for (const auto& served : registry.models()) {
      for (const auto& [name, glossary] : *served->glossaries.get()) {
        glossaries.push_back(
            {{"model", served->name}, {"name", name}, {"entries", glossary->size()}});
      }
    }
    respond(json_answer(200, {{"glossaries", glossaries}}));
    return true;
  }
  const bool models_path = path == "/admin/models" || path.starts_with("/admin/models/");
  const bool glossary_path = path.starts_with("/admin/glossaries/");
  if (path == "/admin/models" && method == "POST") {
    ModelSpec spec;
    if (RequestStatus read = read_model_change(options, request.body, "", &spec); !read.ok()) {
      return respond(error_answer(read)), true;
    }
    run_change(respond, [&registry, spec] {
      const RequestStatus loaded = registry.load(spec);
      if (!loaded.ok()) return error_answer(loaded);
      return json_answer(201, {{"model", describe_model(registry, spec.name)}});
    });
    return true;
  }
  if (models_path && path != "/admin/models") {
    const std::string name = path_name(path, "/admin/models");
    if (method == "PUT") {
      ModelSpec spec;
      if (RequestStatus read = read_model_change(options, request.body, name, &spec); !read.ok()) {
        return respond(error_answer(read)), true;
      }
      run_change(respond, [&registry, spec] {
        const RequestStatus replaced = registry.replace(spec);
        if (!replaced.ok()) return error_answer(replaced);
        return json_answer(200, {{"model", describe_model(registry, spec.name)}});
      });
      return true;
    }
    if (method == "DELETE") {
      run_change(respond, [&registry, name] {
        const RequestStatus unloaded = registry.unload(name);
        if (!unloaded.ok()) return error_answer(unloaded);
        return json_answer(200, {{"unloaded", name}});
      });
      return true;
    }
  }
  if (glossary_path) {
    const std::string name = path_name(path, "/admin/glossaries");
    if (!storable_name(name)) {
      respond(error_answer({StatusCode::kInvalidArgument,
                            "a glossary name is 1-64 of A-Z a-z 0-9 . _ - (not starting with "
                            "'.')"}));
      return true;
    }
    if (method == "PUT") {
      std::string model;
      std::shared_ptr<const Glossary> glossary;
      if (RequestStatus read = read_glossary_change(request.body, &model, &glossary); !read.ok()) {
        return respond(error_answer(read)), true;
      }
      const std::string directory = options.glossary_dir;
      run_change(respond, [&registry, directory, model, name, glossary] {
        const RequestStatus put = registry.put_glossary(model, name, glossary);
        if (!put.ok()) return error_answer(put);
        if (!directory.empty()) store_glossary(directory, model, name, *glossary);
        return json_answer(
            200, {{"glossary", {{"name", name}, {"model", model}, {"entries", glossary->size()}}}});
      });
      return true;
    }
    if (method == "DELETE") {
      const std::string model = query_value(request, "model");
      const std::string directory = options.glossary_dir;
      run_change(respond, [&registry, directory, model, name] {
        const RequestStatus removed = registry.remove_glossary(model, name);
        if (!directory.empty() && (model.empty() || storable_name(model))) {
          erase_stored_glossary(directory, model, name);
          // Without a model it left every model: so do their own copies on disk.
          for (const auto& served :
               model.empty() ? registry.models() : std::vector<std::shared_ptr<ServedModel>>()) {
            if (storable_name(served->name)) erase_stored_glossary(directory, served->name, name);
          }
        }
        if (!removed.ok()) return error_answer(removed);
        return json_answer(200, {{"deleted", name}});
      });
      return true;
    }
  }
  respond(error_answer({StatusCode::kNotFound,
                        "admin paths: GET/POST /admin/models, PUT/DELETE /admin/models/NAME, GET "
                        "/admin/glossaries, PUT/DELETE /admin/glossaries/NAME"}));
  return true;
}

}  // namespace rpt::server
