// API keys and their monthly character quotas (`rpt-server --api-keys FILE`). Without the flag
// every call is admitted, as before. With it, every translation call must present a listed key
// (gRPC metadata and HTTP `Authorization: Bearer KEY`; LibreTranslate's `api_key`; DeepL's
// `Authorization: DeepL-Auth-Key KEY`) and is charged, when admitted, the characters (code
// points) of its texts against the key's quota for the calendar month (UTC).
//
// The file: one key a line, `KEY<TAB>NAME[<TAB>CHARACTERS_PER_MONTH]` (0 or none: no quota);
// blank lines and lines starting with # are skipped. A key is 16-256 printable ASCII characters
// without spaces. Usage is kept in memory: a restart starts the month's count again.
//
// Thread safety: authorize() and usage() may be called concurrently.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "server/status.h"

namespace rpt::server {

struct ApiKey {
  std::string key;
  std::string name;                     // for the log: never the key itself
  std::int64_t monthly_characters = 0;  // 0: no quota
};

class ApiKeys {
 public:
  ApiKeys() = default;  // no keys: every call admitted
  // Throws std::invalid_argument naming the file's line.
  static ApiKeys load(const std::string& path);
  // From the file's text (`where` names it in errors).
  static ApiKeys parse(std::string_view text, const std::string& where);

  ApiKeys(ApiKeys&& other) noexcept;
  ApiKeys& operator=(ApiKeys&&) = delete;

  bool enabled() const { return !keys_.empty(); }
  // The listed key `presented` is, or nullptr.
  const ApiKey* find(std::string_view presented) const;

  // Admits a call of `characters` presented with `presented` (empty: none): OK and charged,
  // UNAUTHENTICATED without a listed key, QUOTA_EXCEEDED (nothing charged) past the quota.
  // Always OK when disabled.
  RequestStatus authorize(std::string_view presented, std::int64_t characters);

  struct Usage {
    std::int64_t characters = 0;  // this month
    std::int64_t limit = 0;       // 0: none
  };
  Usage usage(const ApiKey& key) const;

 private:
  struct Month {
    int month = 0;  // year * 12 + month, UTC
    std::int64_t characters = 0;
  };

  std::vector<ApiKey> keys_;
  std::unordered_map<std::string, std::size_t> by_key_;
  mutable std::mutex mutex_;
  mutable std::vector<Month> used_;  // per key
};

// Characters as the quotas count them: code points (bytes of text that is not UTF-8).
std::int64_t billed_characters(std::string_view text);

}  // namespace rpt::server
