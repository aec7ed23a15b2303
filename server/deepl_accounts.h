// What DeepL's API keeps per API key (server/deepl_api.h): the glossaries a client created at run
// time (/v2/glossaries) and the characters it had translated (/v2/usage). In memory: a restart
// forgets both, as a replica that comes and goes would; a client recreates its glossaries.
//
// Bounded against a client that invents keys or glossaries: at most `max_keys` keys and
// `max_glossaries_per_key` glossaries each (of at most GlossaryLimits::kEntriesPerCall entries).
//
// Thread safety: every member may be called concurrently.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/glossary.h"

namespace rpt::server {

// A random id in a UUID's form (glossaries, documents and their keys).
std::string deepl_random_id();

struct DeepLGlossary {
  std::string id;  // 36 characters, a random UUID's form
  std::string name;
  std::string source_language;  // the served models' codes ("en")
  std::string target_language;
  std::vector<GlossaryEntry> entries;
  std::string creation_time;  // ISO 8601, UTC
};

struct DeepLAccountLimits {
  std::size_t max_keys = 10000;
  std::size_t max_glossaries_per_key = 100;
};

class DeepLAccounts {
 public:
  explicit DeepLAccounts(DeepLAccountLimits limits = {}) : limits_(limits) {}

  // False when the key is new and max_keys are already known (the call is refused).
  bool admit(const std::string& key);

  void add_usage(const std::string& key, long long characters);
  long long usage(const std::string& key) const;

  // Gives the glossary its id and creation time; nullptr when the key has max_glossaries_per_key.
  std::shared_ptr<const DeepLGlossary> add_glossary(const std::string& key, DeepLGlossary glossary);
  // nullptr when the key has no glossary with this id.
  std::shared_ptr<const DeepLGlossary> glossary(const std::string& key,
                                                const std::string& id) const;
  std::vector<std::shared_ptr<const DeepLGlossary>> glossaries(const std::string& key) const;
  bool remove_glossary(const std::string& key, const std::string& id);

 private:
  struct Account {
    long long characters = 0;
    std::vector<std::shared_ptr<const DeepLGlossary>> glossaries;  // in creation order
  };

  const DeepLAccountLimits limits_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, Account> accounts_;
};

}  // namespace rpt::server
