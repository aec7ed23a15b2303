#include "client/admin_client.h"

#include <iostream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "client/curl_handles.h"
#include "common/glossary_file.h"
#include "common/key_file.h"

namespace rpt::client {
namespace {

struct HttpAnswer {
  long status = 0;
  std::string body;
};

std::size_t collect(char* data, std::size_t size, std::size_t count, void* out) {
  static_cast<std::string*>(out)->append(data, size * count);
  return size * count;
}

HttpAnswer call(const AdminOptions& options, const std::string& method, const std::string& path,
                const std::string& key, const std::string& body) {
  CurlGlobal global;
  CurlEasy easy(curl_easy_init());
  if (!easy) throw std::runtime_error("libcurl could not make a handle");
  const std::string url = options.url + path;
  CurlList headers;
  append(headers, "Authorization: Bearer " + key);
  append(headers, "Content-Type: application/json");
  HttpAnswer answer;
  curl_easy_setopt(easy.get(), CURLOPT_URL, url.c_str());
  curl_easy_setopt(easy.get(), CURLOPT_CUSTOMREQUEST, method.c_str());
  curl_easy_setopt(easy.get(), CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(easy.get(), CURLOPT_WRITEFUNCTION, collect);
  curl_easy_setopt(easy.get(), CURLOPT_WRITEDATA, &answer.body);
  curl_easy_setopt(easy.get(), CURLOPT_TIMEOUT_MS,
                   static_cast<long>(options.timeout_seconds * 1000.0));
  if (!body.empty() || method == "POST" || method == "PUT") {
    curl_easy_setopt(easy.get(), CURLOPT_POSTFIELDS, body.c_str());
    curl_easy_setopt(easy.get(), CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  }
  const CURLcode done = curl_easy_perform(easy.get());
  if (done != CURLE_OK) {
    throw std::runtime_error(url + ": " + curl_easy_strerror(done));
  }
  curl_easy_getinfo(easy.get(), CURLINFO_RESPONSE_CODE, &answer.status);
  return answer;
}

std::string model_body(const AdminOptions& options, bool with_name) {
  nlohmann::json body = {{"directory", options.path}};
  if (with_name) body["name"] = options.name;
  if (!options.compute_type.empty()) body["compute_type"] = options.compute_type;
  return body.dump();
}

std::string glossary_body(const AdminOptions& options) {
  nlohmann::json entries = nlohmann::json::array();
  for (const GlossaryFileEntry& entry : read_glossary_file(options.path, 100000)) {
    entries.push_back({entry.source, entry.target});
  }
  nlohmann::json body = {{"entries", entries}};
  if (!options.model.empty()) body["model"] = options.model;
  return body.dump();
}

}  // namespace

CLI::App* add_admin_subcommand(CLI::App& app, AdminOptions& options) {
  CLI::App* admin = app.add_subcommand(
      "admin", "Change the models and glossaries of a running rpt-server (its admin API)");
  admin->add_option("--url", options.url, "The server's --metrics-port URL")->capture_default_str();
  admin->add_option("--key-file", options.key_file, "File holding the admin key (first line)")
      ->required()
      ->check(CLI::ExistingFile);
  admin->add_option("--timeout", options.timeout_seconds, "Seconds to wait (a load can be slow)")
      ->check(CLI::Range(0.001, 86400.0))
      ->capture_default_str();
  admin->add_option("--compute-type", options.compute_type, "load/replace: the model's precision");
  admin->add_option("--for-model", options.model, "glossary verbs: one model (default: all)");
  admin
      ->add_option("verb", options.verb,
                   "models | glossaries | load NAME DIR | replace NAME DIR | unload NAME | "
                   "put-glossary NAME TSV | delete-glossary NAME")
      ->required()
      ->check(CLI::IsMember({"models", "glossaries", "load", "replace", "unload", "put-glossary",
                             "delete-glossary"}));
  admin->add_option("name", options.name, "The model's or glossary's name");
  admin->add_option("path", options.path, "The model directory or glossary TSV");
  return admin;
}

int run_admin(const AdminOptions& options) {
  const std::string& verb = options.verb;
  const bool needs_name = verb != "models" && verb != "glossaries";
  const bool needs_path = verb == "load" || verb == "replace" || verb == "put-glossary";
  if ((needs_name && options.name.empty()) || (needs_path && options.path.empty())) {
    std::cerr << "rpt-client admin " << verb << ": wants "
              << (needs_path ? "NAME and PATH" : "NAME") << "\n";
    return 2;
  }
  HttpAnswer answer;
  try {
    const std::string key = read_key_file(options.key_file);
    const std::string model_query = options.model.empty() ? "" : "?model=" + options.model;
    if (verb == "models") answer = call(options, "GET", "/admin/models", key, "");
    if (verb == "glossaries") answer = call(options, "GET", "/admin/glossaries", key, "");
    if (verb == "load") {
      answer = call(options, "POST", "/admin/models", key, model_body(options, true));
    }
    if (verb == "replace") {
      answer =
          call(options, "PUT", "/admin/models/" + options.name, key, model_body(options, false));
    }
    if (verb == "unload")
      answer = call(options, "DELETE", "/admin/models/" + options.name, key, "");
    if (verb == "put-glossary") {
      answer =
          call(options, "PUT", "/admin/glossaries/" + options.name, key, glossary_body(options));
    }
    if (verb == "delete-glossary") {
      answer = call(options, "DELETE", "/admin/glossaries/" + options.name + model_query, key, "");
    }
  } catch (const std::exception& error) {
    std::cerr << "rpt-client admin: " << error.what() << "\n";
    return 2;
  }
  if (answer.status >= 200 && answer.status < 300) {
    std::cout << answer.body;
    return 0;
  }
  std::cerr << "rpt-client admin " << verb << ": HTTP " << answer.status << ": " << answer.body;
  return 1;
}

}  // namespace rpt::client
