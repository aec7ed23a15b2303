#include "server/json_request.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <string>
#include <unordered_set>
#include <vector>

#include <google/protobuf/util/json_util.h>
#include <nlohmann/json.hpp>

namespace rpt::server {
namespace {

using nlohmann::json;

RequestStatus invalid(std::string message) {
  return {StatusCode::kInvalidArgument, std::move(message)};
}

// Where a parse is in a body, event by event: the field it reads ("texts[1]", "options.format",
// "a field name after texts") and the names each open object has given so far, so that a name
// given twice is found as it is read. Nesting past kMaxJsonDepth is refused as it opens.
class FieldPath {
 public:
  // False (nothing opened) past kMaxJsonDepth.
  bool open(bool array) {
    if (levels_.size() >= static_cast<std::size_t>(kMaxJsonDepth)) return false;
    levels_.emplace_back().array = array;
    return true;
  }
  // The name of the innermost object's next field; false when the object gave it before.
  bool key(const std::string& name) {
    Level& level = levels_.back();
    level.key = name;
    level.in_value = true;
    return level.names.insert(name).second;
  }
  // A value was read whole: the next one is the array's next element, or the object's next name.
  void value() {
    if (levels_.empty()) return;
    if (levels_.back().array) {
      ++levels_.back().index;
    } else {
      levels_.back().in_value = false;
    }
  }
  void close() {
    levels_.pop_back();
    value();
  }

  std::string field() const {
    std::string path;
    for (const Level& level : levels_) {
      if (level.array) {
        path += "[" + std::to_string(level.index) + "]";
      } else if (!level.key.empty()) {
        path += (path.empty() ? "" : ".") + level.key;
      }
    }
    const bool in_name = !levels_.empty() && !levels_.back().array && !levels_.back().in_value;
    if (!in_name) return path;
    return "a field name" + (path.empty() ? std::string() : " after " + path);
  }

 private:
  struct Level {
    bool array = false;
    std::string key;                        // an object's field being read
    bool in_value = false;                  // an object: past the field's name
    std::size_t index = 0;                  // an array: the element being read
    std::unordered_set<std::string> names;  // an object's fields so far
  };

  std::vector<Level> levels_;
};

// Thrown by the parser's callback at an object or array nested kMaxJsonDepth deep, before the
// parser goes any deeper: what comes after (the options' dump(), protobuf's JSON parser, the
// document's destruction) recurses per level, and 100,000 levels overflowed an HTTP worker's
// stack (SIGSEGV: every call on the pod lost).
struct NestedTooDeep {};

// Thrown by the parser's callback at a field name its object gave before: nlohmann keeps the
// last value, so {"texts": ["a"], "texts": ["b"]} would translate "b" alone without a word.
struct GivenTwice {
  std::string field;  // as FieldPath names it
};

json parse_bounded(std::string_view text) {
  FieldPath path;
  return json::parse(text, [&path](int, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        if (!path.open(event == json::parse_event_t::array_start)) throw NestedTooDeep{};
        break;
      case json::parse_event_t::key:
        if (!path.key(parsed.get_ref<const std::string&>())) throw GivenTwice{path.field()};
        break;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        path.close();
        break;
      case json::parse_event_t::value:
        path.value();
        break;
    }
    return true;
  });
}

// The field a parse stopped in, from the SAX events before the error (FieldPath::field).
class FieldLocator final : public nlohmann::json_sax<json> {
 public:
  std::string field() const { return path_.field(); }

  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(number_integer_t) override { return value(); }
  bool number_unsigned(number_unsigned_t) override { return value(); }
  bool number_float(number_float_t, const string_t&) override { return value(); }
  bool string(string_t&) override { return value(); }
  bool binary(binary_t&) override { return value(); }
  bool start_object(std::size_t) override { return path_.open(false); }
  bool key(string_t& name) override {
    path_.key(name);
    return true;
  }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return path_.open(true); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }

 private:
  bool value() {
    path_.value();
    return true;
  }
  bool close() {
    path_.close();
    return true;
  }

  FieldPath path_;
};

// INVALID_ARGUMENT for a body the parser refused: invalid UTF-8 named by its field ("texts[1] is
// not valid UTF-8", as gRPC names it), anything else with the parser's position.
RequestStatus not_json(std::string_view body_text, const json::exception& error) {
  const std::string reason = error.what();
  if (reason.find("UTF-8") != std::string::npos) {
    FieldLocator locator;
    json::sax_parse(body_text, &locator);
    if (const std::string field = locator.field(); !field.empty()) {
      return invalid(field + " is not valid UTF-8");
    }
  }
  return invalid("the body is not valid JSON: " + reason);
}

// Reads the optional string `name` of `body` into `*out`; null counts as absent.
RequestStatus read_string(const json& body, const char* name, std::string* out) {
  const auto found = body.find(name);
  if (found == body.end() || found->is_null()) return RequestStatus::Ok();
  if (!found->is_string()) {
    return invalid(std::string(name) + " must be a string, not " + found->type_name());
  }
  *out = found->get<std::string>();
  return RequestStatus::Ok();
}

RequestStatus read_texts(const json& body, v1::TranslateRequest* request) {
  const auto found = body.find("texts");
  if (found == body.end() || found->is_null()) return RequestStatus::Ok();  // "texts is empty"
  if (!found->is_array()) {
    return invalid(std::string("texts must be an array of strings, not ") + found->type_name());
  }
  for (std::size_t i = 0; i < found->size(); ++i) {
    const json& text = (*found)[i];
    if (!text.is_string()) {
      return invalid("texts[" + std::to_string(i) + "] must be a string, not " + text.type_name());
    }
    request->add_texts(text.get<std::string>());
  }
  return RequestStatus::Ok();
}

// `glossary`: an array of {"source": ..., "target": ...} objects; each entry's terms are checked
// later, with the gRPC path's rules (server/request_validation.h).
RequestStatus read_glossary(const json& body, v1::TranslateRequest* request) {
  const auto found = body.find("glossary");
  if (found == body.end() || found->is_null()) return RequestStatus::Ok();
  if (!found->is_array()) {
    return invalid(std::string("glossary must be an array of {\"source\", \"target\"} "
                               "objects, not ") +
                   found->type_name());
  }
  for (std::size_t i = 0; i < found->size(); ++i) {
    const json& entry = (*found)[i];
    const std::string where = "glossary[" + std::to_string(i) + "]";
    if (!entry.is_object()) {
      return invalid(where + " must be an object with source and target, not " + entry.type_name());
    }
    v1::GlossaryEntry* out = request->add_glossary();
    for (const auto& [name, value] : entry.items()) {
      if (name != "source" && name != "target") {
        return invalid(where + " has an unknown field \"" + name +
                       "\"; an entry has source and target");
      }
      if (!value.is_string()) {
        return invalid(where + "." + name + " must be a string, not " + value.type_name());
      }
      (name == "source" ? out->mutable_source() : out->mutable_target())
          ->assign(value.get<std::string>());
    }
  }
  return RequestStatus::Ok();
}

// An enum option given by its short name ("auto") becomes its proto name (SPLIT_SENTENCES_AUTO);
// a name that is neither is refused with the choices ("options.format is 'mdx'; it must be ...").
RequestStatus accept_short_name(json& options, const char* field, const std::string& prefix,
                                std::initializer_list<const char*> names) {
  const auto value = options.find(field);
  if (value == options.end() || !value->is_string()) return RequestStatus::Ok();
  const std::string given = value->get<std::string>();
  if (given.starts_with(prefix)) return RequestStatus::Ok();  // the proto name: protobuf judges
  std::string choices;
  for (const char* name : names) {
    choices += (choices.empty() ? "" : ", ") + std::string(name);
    if (given != name) continue;
    std::string upper = name;
    for (char& c : upper) c = static_cast<char>(c - 'a' + 'A');
    *value = prefix + upper;
    return RequestStatus::Ok();
  }
  return invalid("options." + std::string(field) + " is '" + given + "'; it must be one of " +
                 choices);
}

// `options` through protobuf's own JSON parser: the proto3 mapping of DecodingOptions, unknown
// fields refused.
RequestStatus read_options(const json& body, v1::DecodingOptions* options) {
  const auto found = body.find("options");
  if (found == body.end() || found->is_null()) return RequestStatus::Ok();
  if (!found->is_object()) {
    return invalid(std::string("options must be an object, not ") + found->type_name());
  }
  json given = *found;
  for (const RequestStatus& named :
       {accept_short_name(given, "split_sentences", "SPLIT_SENTENCES_",
                          {"auto", "newlines", "sentences", "none"}),
        accept_short_name(given, "format", "TEXT_FORMAT_",
                          {"text", "html", "xml", "po", "xliff", "json", "markdown"})}) {
    if (!named.ok()) return named;
  }
  const auto parsed = google::protobuf::util::JsonStringToMessage(given.dump(), options);
  if (!parsed.ok()) return invalid("options: " + std::string(parsed.message()));
  return RequestStatus::Ok();
}

RequestStatus read_timeout(const json& body, std::optional<double>* timeout) {
  const auto found = body.find("timeout");
  if (found == body.end() || found->is_null()) return RequestStatus::Ok();
  if (!found->is_number()) {
    return invalid(std::string("timeout must be a number of seconds, not ") + found->type_name());
  }
  const double seconds = found->get<double>();
  if (!std::isfinite(seconds) || seconds <= 0) {
    return invalid("timeout must be a positive number of seconds");
  }
  *timeout = seconds;
  return RequestStatus::Ok();
}

}  // namespace

RequestStatus parse_json_body(std::string_view body_text, json* parsed) {
  // JSON text is UTF-8 (RFC 8259): invalid UTF-8 in any string, names included, fails here,
  // named by its field; no field can hold it. So does a field an object gives twice (RFC 8259
  // leaves its meaning open; nlohmann would keep the last).
  try {
    *parsed = parse_bounded(body_text);
  } catch (const json::exception& error) {  // parse_error, and out_of_range for 1e999
    return not_json(body_text, error);
  } catch (const NestedTooDeep&) {
    return invalid("the body nests objects and arrays more than " + std::to_string(kMaxJsonDepth) +
                   " levels deep");
  } catch (const GivenTwice& twice) {
    return invalid(twice.field + " is given twice; each field of an object may be given once");
  }
  return RequestStatus::Ok();
}

RequestStatus parse_translate_json(std::string_view body_text, JsonTranslateRequest* parsed) {
  json body;
  if (RequestStatus status = parse_json_body(body_text, &body); !status.ok()) return status;
  if (!body.is_object()) {
    return invalid(std::string("the body must be a JSON object, not ") + body.type_name());
  }
  static constexpr const char* kFields[] = {"model",    "source_language", "target_language",
                                            "texts",    "options",         "timeout",
                                            "glossary", "glossary_name"};
  for (const auto& [name, value] : body.items()) {
    if (std::find(std::begin(kFields), std::end(kFields), name) == std::end(kFields)) {
      return invalid("unknown field \"" + name +
                     "\"; the fields are model, source_language, "
                     "target_language, texts, options, timeout, glossary and glossary_name");
    }
  }
  v1::TranslateRequest& request = parsed->request;
  v1::ModelSelector* selector = request.mutable_model();
  for (RequestStatus status :
       {read_string(body, "model", selector->mutable_model()),
        read_string(body, "source_language", selector->mutable_source_language()),
        read_string(body, "target_language", selector->mutable_target_language()),
        read_texts(body, &request), read_options(body, request.mutable_options()),
        read_glossary(body, &request),
        read_string(body, "glossary_name", request.mutable_glossary_name()),
        read_timeout(body, &parsed->timeout_seconds)}) {
    if (!status.ok()) return status;
  }
  return RequestStatus::Ok();
}

std::string json_error(const RequestStatus& status) {
  const json error = {{"error", {{"code", code_name(status.code)}, {"message", status.message}}}};
  return error.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

std::optional<std::string> to_json(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string out;
  const auto printed = google::protobuf::util::MessageToJsonString(message, &out, options);
  if (!printed.ok()) return std::nullopt;
  return out + "\n";
}

}  // namespace rpt::server
