#include "server/admin_requests.h"

#include <nlohmann/json.hpp>

#include "engine/engine.h"
#include "server/glossary_store.h"
#include "server/json_request.h"

namespace rpt::server {
namespace {

// body[field] as a string ("" when absent); INVALID_ARGUMENT when present and not a string.
RequestStatus string_field(const nlohmann::json& body, const char* field, std::string* out) {
  out->clear();
  if (!body.contains(field)) return RequestStatus::Ok();
  if (!body[field].is_string()) {
    return {StatusCode::kInvalidArgument, std::string(field) + " must be a string"};
  }
  *out = body[field].get<std::string>();
  return RequestStatus::Ok();
}

RequestStatus bad_name(const std::string& what, const std::string& name) {
  return {StatusCode::kInvalidArgument, "a " + what +
                                            " name is 1-64 of A-Z a-z 0-9 . _ - (not starting "
                                            "with '.'), got '" +
                                            echoed_text(name) + "'"};
}

}  // namespace

RequestStatus read_model_change(const ServerOptions& options, std::string_view text,
                                const std::string& name, ModelSpec* spec) {
  nlohmann::json body;
  if (RequestStatus parsed = parse_json_body(text, &body); !parsed.ok()) return parsed;
  if (!body.is_object()) return {StatusCode::kInvalidArgument, "the body must be a JSON object"};
  for (const auto& item : body.items()) {
    const std::string& field = item.key();
    const bool known =
        field == "directory" || field == "compute_type" || (field == "name" && name.empty());
    if (!known) {
      return {StatusCode::kInvalidArgument, "unknown field '" + echoed_text(field) +
                                                "'; a model is {" + (name.empty() ? "name, " : "") +
                                                "directory, compute_type}"};
    }
  }
  std::string compute_type;
  spec->name = name;
  RequestStatus read = name.empty() ? string_field(body, "name", &spec->name) : RequestStatus::Ok();
  if (read.ok()) read = string_field(body, "directory", &spec->directory);
  if (read.ok()) read = string_field(body, "compute_type", &compute_type);
  if (!read.ok()) return read;
  if (!storable_name(spec->name)) return bad_name("model", spec->name);
  if (spec->directory.empty()) return {StatusCode::kInvalidArgument, "directory is required"};
  spec->precision = options.compute.precision;
  if (!compute_type.empty()) {
    try {
      spec->precision = parse_precision(compute_type);
    } catch (const std::exception& error) {
      return {StatusCode::kInvalidArgument, client_message(error)};
    }
  }
  return RequestStatus::Ok();
}

RequestStatus read_glossary_change(std::string_view text, std::string* model,
                                   std::shared_ptr<const Glossary>* glossary) {
  nlohmann::json body;
  if (RequestStatus parsed = parse_json_body(text, &body); !parsed.ok()) return parsed;
  if (!body.is_object()) return {StatusCode::kInvalidArgument, "the body must be a JSON object"};
  for (const auto& item : body.items()) {
    if (item.key() != "entries" && item.key() != "model") {
      return {StatusCode::kInvalidArgument,
              "unknown field '" + echoed_text(item.key()) + "'; a glossary is {entries, model}"};
    }
  }
  if (RequestStatus read = string_field(body, "model", model); !read.ok()) return read;
  if (!model->empty() && !storable_name(*model)) return bad_name("model", *model);
  try {
    *glossary = std::make_shared<const Glossary>(glossary_entries_from_json(body),
                                                 GlossaryLimits::kEntriesPerFile, "entries");
  } catch (const std::exception& error) {
    return {StatusCode::kInvalidArgument, client_message(error)};
  }
  return RequestStatus::Ok();
}

}  // namespace rpt::server
