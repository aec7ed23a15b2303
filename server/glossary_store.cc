#include "server/glossary_store.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

namespace rpt::server {
namespace {

namespace fs = std::filesystem;

fs::path glossary_path(const std::string& directory, const std::string& model,
                       const std::string& name) {
  const fs::path scope = model.empty() ? fs::path("all") : fs::path("model") / model;
  return fs::path(directory) / scope / (name + ".json");
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void read_scope(const fs::path& folder, const std::string& model,
                std::vector<StoredGlossary>* out) {
  std::error_code error;
  if (!fs::is_directory(folder, error)) return;
  for (const fs::directory_entry& file : fs::directory_iterator(folder, error)) {
    const fs::path& path = file.path();
    if (path.extension() != ".json" || !storable_name(path.stem().string())) continue;
    try {
      auto glossary = std::make_shared<const Glossary>(
          glossary_entries_from_json(nlohmann::json::parse(read_text(path), nullptr, false)),
          GlossaryLimits::kEntriesPerFile, path.string());
      out->push_back({model, path.stem().string(), std::move(glossary), path.string()});
    } catch (const std::exception& e) {
      spdlog::warn("stored glossary {} skipped: {}", path.string(), e.what());
    }
  }
}

}  // namespace

bool storable_name(std::string_view name) {
  if (name.empty() || name.size() > 64 || name.front() == '.') return false;
  for (const char c : name) {
    const bool allowed = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                         (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!allowed) return false;
  }
  return true;
}

std::vector<StoredGlossary> read_stored_glossaries(const std::string& directory) {
  std::vector<StoredGlossary> out;
  read_scope(fs::path(directory) / "all", "", &out);
  std::error_code error;
  const fs::path models = fs::path(directory) / "model";
  if (fs::is_directory(models, error)) {
    for (const fs::directory_entry& model : fs::directory_iterator(models, error)) {
      if (model.is_directory() && storable_name(model.path().filename().string())) {
        read_scope(model.path(), model.path().filename().string(), &out);
      }
    }
  }
  return out;
}

void store_glossary(const std::string& directory, const std::string& model, const std::string& name,
                    const Glossary& glossary) {
  const fs::path path = glossary_path(directory, model, name);
  std::error_code error;
  fs::create_directories(path.parent_path(), error);
  if (error) throw std::runtime_error("cannot create " + path.parent_path().string());
  nlohmann::json entries = nlohmann::json::array();
  for (const GlossaryEntry& entry : glossary.entries()) {
    entries.push_back({entry.source, entry.target});
  }
  const fs::path temporary = path.string() + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << nlohmann::json{{"entries", entries}}.dump() << "\n";
    if (!out.flush()) throw std::runtime_error("cannot write " + temporary.string());
  }
  fs::rename(temporary, path, error);
  if (error) throw std::runtime_error("cannot write " + path.string() + ": " + error.message());
}

bool erase_stored_glossary(const std::string& directory, const std::string& model,
                           const std::string& name) {
  std::error_code error;
  return fs::remove(glossary_path(directory, model, name), error);
}

std::vector<GlossaryEntry> glossary_entries_from_json(const nlohmann::json& parsed) {
  if (!parsed.is_object() || !parsed.contains("entries") || !parsed["entries"].is_array()) {
    throw std::invalid_argument("a glossary is {\"entries\": [[\"source\", \"target\"], ...]}");
  }
  std::vector<GlossaryEntry> entries;
  const nlohmann::json& list = parsed["entries"];
  for (std::size_t i = 0; i < list.size(); ++i) {
    const nlohmann::json& item = list[i];
    const nlohmann::json* source = nullptr;
    const nlohmann::json* target = nullptr;
    if (item.is_array() && item.size() == 2) {
      source = &item[0];
      target = &item[1];
    } else if (item.is_object() && item.contains("source") && item.contains("target")) {
      source = &item["source"];
      target = &item["target"];
    }
    if (source == nullptr || !source->is_string() || !target->is_string()) {
      throw std::invalid_argument("entries[" + std::to_string(i) +
                                  "] is not [\"source\", \"target\"]");
    }
    entries.push_back({source->get<std::string>(), target->get<std::string>()});
  }
  return entries;
}

}  // namespace rpt::server
