#include "server/deepl_accounts.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <random>

namespace rpt::server {

std::string deepl_random_id() {
  static std::mutex mutex;
  static std::mt19937_64 generator{std::random_device{}()};
  std::uint64_t high = 0;
  std::uint64_t low = 0;
  {
    std::lock_guard lock(mutex);
    high = generator();
    low = generator();
  }
  char id[37];
  std::snprintf(id, sizeof id, "%08x-%04x-4%03x-%04x-%012llx", static_cast<unsigned>(high >> 32),
                static_cast<unsigned>(high >> 16) & 0xffff, static_cast<unsigned>(high) & 0xfff,
                static_cast<unsigned>(low >> 48 & 0x3fff) | 0x8000,
                static_cast<unsigned long long>(low & 0xffffffffffffULL));
  return id;
}

namespace {

// "2026-11-27T21:58:48.123Z", DeepL's form (milliseconds: its clients parse them).
std::string utc_now() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[40];
  const std::size_t length = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
  std::snprintf(text + length, sizeof text - length, ".%03dZ", static_cast<int>(millis));
  return text;
}

}  // namespace

bool DeepLAccounts::admit(const std::string& key) {
  std::lock_guard lock(mutex_);
  if (accounts_.contains(key)) return true;
  if (accounts_.size() >= limits_.max_keys) return false;
  accounts_.emplace(key, Account{});
  return true;
}

void DeepLAccounts::add_usage(const std::string& key, long long characters) {
  std::lock_guard lock(mutex_);
  const auto found = accounts_.find(key);
  if (found != accounts_.end()) found->second.characters += characters;
}

long long DeepLAccounts::usage(const std::string& key) const {
  std::lock_guard lock(mutex_);
  const auto found = accounts_.find(key);
  return found == accounts_.end() ? 0 : found->second.characters;
}

std::shared_ptr<const DeepLGlossary> DeepLAccounts::add_glossary(const std::string& key,
                                                                 DeepLGlossary glossary) {
  glossary.id = deepl_random_id();
  glossary.creation_time = utc_now();
  auto created = std::make_shared<const DeepLGlossary>(std::move(glossary));
  std::lock_guard lock(mutex_);
  Account& account = accounts_[key];
  if (account.glossaries.size() >= limits_.max_glossaries_per_key) return nullptr;
  account.glossaries.push_back(created);
  return created;
}

std::shared_ptr<const DeepLGlossary> DeepLAccounts::glossary(const std::string& key,
                                                             const std::string& id) const {
  std::lock_guard lock(mutex_);
  const auto found = accounts_.find(key);
  if (found == accounts_.end()) return nullptr;
  for (const auto& glossary : found->second.glossaries) {
    if (glossary->id == id) return glossary;
  }
  return nullptr;
}

std::vector<std::shared_ptr<const DeepLGlossary>> DeepLAccounts::glossaries(
    const std::string& key) const {
  std::lock_guard lock(mutex_);
  const auto found = accounts_.find(key);
  return found == accounts_.end() ? std::vector<std::shared_ptr<const DeepLGlossary>>{}
                                  : found->second.glossaries;
}

bool DeepLAccounts::remove_glossary(const std::string& key, const std::string& id) {
  std::lock_guard lock(mutex_);
  const auto found = accounts_.find(key);
  if (found == accounts_.end()) return false;
  auto& glossaries = found->second.glossaries;
  const auto removed = std::remove_if(glossaries.begin(), glossaries.end(),
                                      [&id](const auto& glossary) { return glossary->id == id; });
  const bool any = removed != glossaries.end();
  glossaries.erase(removed, glossaries.end());
  return any;
}

}  // namespace rpt::server
