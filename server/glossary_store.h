// Named glossaries the admin API created, kept in a directory (--glossary-dir) so that a restart
// serves them again: DIR/all/NAME.json for every model, DIR/model/MODEL/NAME.json for one, each
// {"entries": [["source", "target"], ...]}. JSON rather than the TSV of --glossary: any term
// survives the round trip (a TSV line starting with '#' is a comment). Writes are atomic (a
// temporary file renamed over the old one).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/glossary.h"

namespace rpt::server {

struct StoredGlossary {
  std::string model;  // empty: every model
  std::string name;
  std::shared_ptr<const Glossary> glossary;
  std::string path;
};

// Names that may become file names: 1-64 of [A-Za-z0-9._-], not starting with '.'.
bool storable_name(std::string_view name);

// Every glossary under `directory` (none when it does not exist); a file that cannot be read or
// holds a refused entry is logged and skipped.
std::vector<StoredGlossary> read_stored_glossaries(const std::string& directory);
// Throws std::runtime_error naming the path when it cannot be written.
void store_glossary(const std::string& directory, const std::string& model, const std::string& name,
                    const Glossary& glossary);
// False when there was no such file.
bool erase_stored_glossary(const std::string& directory, const std::string& model,
                           const std::string& name);

// A parsed {"entries": [["source", "target"], ...]} (or objects {"source": ..., "target": ...})
// into entries; INVALID_ARGUMENT-worthy problems as std::invalid_argument naming the entry.
std::vector<GlossaryEntry> glossary_entries_from_json(const nlohmann::json& body);

}  // namespace rpt::server
