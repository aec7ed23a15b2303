// API keys as tenants (`rpt-server --api-keys FILE`). Without the flag every call is admitted, as
// before. With it, every translation call must present a key of a listed tenant (gRPC metadata
// and HTTP `Authorization: Bearer KEY`; LibreTranslate's `api_key`; DeepL's
// `Authorization: DeepL-Auth-Key KEY`) and is admitted, or refused, by its tenant's limits:
//
//   no or unknown key                UNAUTHENTICATED (HTTP 401)
//   a model the tenant may not use   PERMISSION_DENIED (HTTP 403)
//   the month's characters used up   QUOTA_EXCEEDED (gRPC RESOURCE_EXHAUSTED, HTTP 429, DeepL 456)
//   a token bucket empty             RESOURCE_EXHAUSTED (HTTP 429) with Retry-After: the whole
//                                    seconds until the buckets hold the call (retry_after_seconds)
//
// A refused call is charged nothing; an admitted one takes a request from the requests bucket and
// its characters (code points of its texts) from the characters bucket and the month's quota.
//
// The file is YAML (yaml-cpp):
//
//   tenants:
//     - name: shop                     # 1-64 of A-Z a-z 0-9 . _ -: logs and metrics, never the key
//       keys: [KEY1, KEY2]             # 16-256 printable ASCII characters each, no spaces
//       models: [en-de]                # optional; absent: every model
//       requests_per_second: 20        # optional token bucket; 0 or absent: unlimited
//       characters_per_minute: 200000  # optional token bucket; 0 or absent: unlimited
//       burst_seconds: 2               # a bucket holds rate x burst_seconds (default 1)
//       characters_per_month: 5000000  # the calendar month's (UTC) quota; 0 or absent: none
//       priority: 1                    # 1-10 (default 1): weight in fair admission
//
// Unknown fields, a field given twice, a value of the wrong type or out of range, a tenant name or
// a key listed twice: std::invalid_argument naming the file and the YAML line. A call larger than
// a bucket holds is admitted when the bucket is full and leaves it in debt (the rate holds).
//
// Keys are kept only as their SHA-256 digests: a presented key is hashed, found by its digest and
// compared with CRYPTO_memcmp. Logs name a key as `key sha256:XXXXXXXX` (key_label), never the key.
//
// replace()/reload() swap in a new table atomically (a call in flight keeps the table it started
// with); a tenant that keeps its name keeps its month's count and its buckets. Usage lives in
// memory: a restart starts the month's count again.
//
// Thread safety: every member may be called concurrently.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/status.h"

namespace rpt::server {

using KeyDigest = std::array<unsigned char, 32>;  // SHA-256

// The SHA-256 digest of `key`.
KeyDigest key_digest(std::string_view key);
// How logs and messages name a key: "key sha256:" and the digest's first 8 hex digits.
std::string key_label(std::string_view key);
std::string key_label(const KeyDigest& digest);

// One tenant as the file gives it.
struct TenantSpec {
  std::string name;
  std::vector<KeyDigest> keys;
  std::optional<std::vector<std::string>> models;  // nullopt: every model
  double requests_per_second = 0;                  // 0: unlimited
  double characters_per_minute = 0;                // 0: unlimited
  double burst_seconds = 1;
  std::int64_t characters_per_month = 0;  // 0: no quota
  int priority = 1;

  bool may_use(std::string_view model) const;
};

// A caller's tenant as the schedulers' fair admission sees it (server/fair_queue.h).
struct TenantIdentity {
  std::string name;
  int priority = 1;
};

// The clocks the limits read; tests inject their own.
class TenantClock {
 public:
  virtual ~TenantClock() = default;
  // The buckets' time.
  virtual std::chrono::steady_clock::time_point now() const;
  // The quota's month: year * 12 + month (0-11), UTC.
  virtual int month() const;
};

// A token bucket: `rate` tokens a second up to `capacity`, full when made. take() admits a cost
// when the bucket holds it, or, for a cost over the capacity, when the bucket is full; the bucket
// may then go below zero. Not thread-safe (the tenant's lock guards it).
class TokenBucket {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;

  TokenBucket() = default;  // rate 0: unlimited
  TokenBucket(double rate, double capacity, TimePoint now);

  bool unlimited() const { return rate_ <= 0; }
  // Seconds until `cost` would be admitted (0: now).
  double wait_seconds(double cost, TimePoint now);
  // Takes `cost` (whether or not it is held: call wait_seconds first).
  void take(double cost, TimePoint now);
  // Puts `cost` back (a refund), up to the capacity.
  void give_back(double cost, TimePoint now);
  // A new rate and capacity, keeping the tokens (at most the new capacity); full when the bucket
  // was unlimited.
  void reconfigure(double rate, double capacity, TimePoint now);
  double tokens(TimePoint now);

 private:
  void refill(TimePoint now);

  double rate_ = 0;
  double capacity_ = 0;
  double tokens_ = 0;
  TimePoint last_{};
};

class ApiKeys {
 public:
  // No keys: every call admitted. `clock` null: the real clocks.
  explicit ApiKeys(std::shared_ptr<const TenantClock> clock = nullptr);
  ~ApiKeys();
  ApiKeys(const ApiKeys&) = delete;
  ApiKeys& operator=(const ApiKeys&) = delete;

  // The tenants of the file's text (`where` names it in errors). Throws std::invalid_argument
  // "--api-keys WHERE line N: ...".
  static std::vector<TenantSpec> parse(std::string_view text, const std::string& where);

  // Reads and parses `path` and serves its tenants (remembering `path` for reload()). Throws
  // std::invalid_argument as parse(), or when the file cannot be read.
  void load(const std::string& path);
  // Serves the tenants of `text` in place of the current ones, carrying the usage of the tenants
  // that keep their name. Throws as parse(), leaving the current tenants.
  void replace(std::string_view text, const std::string& where);

  struct Reload {
    bool ok = false;
    std::string message;  // for the log: what changed (tenant names and key labels), or why not
  };
  // Reads the file of load() again (SIGHUP): on success its tenants replace the current ones; on
  // failure the current ones stay and `message` says why.
  Reload reload();

  bool enabled() const;
  // The tenants served (a snapshot).
  std::vector<TenantSpec> tenants() const;
  // The tenant of the key `presented`, or nullopt (also when disabled).
  std::optional<std::string> tenant_name(std::string_view presented) const;
  // The tenant of the key `presented`, its name and priority, or nullopt (also when disabled).
  std::optional<TenantIdentity> identify(std::string_view presented) const;

  // OK when disabled or `presented` is a listed key; UNAUTHENTICATED otherwise. Charges nothing.
  RequestStatus authenticate(std::string_view presented) const;
  // authenticate(), then PERMISSION_DENIED unless the tenant may use `model`. Charges nothing.
  RequestStatus check_model(std::string_view presented, std::string_view model) const;
  // Admits a call of `characters` to `model` (nullopt: not checked here) presented with
  // `presented`: UNAUTHENTICATED, PERMISSION_DENIED, QUOTA_EXCEEDED, RESOURCE_EXHAUSTED with
  // retry_after_seconds, in that order, charging nothing; else OK, charged a request and the
  // characters. Always OK when disabled.
  RequestStatus admit(std::string_view presented, std::optional<std::string_view> model,
                      std::int64_t characters);

  // Gives back what admit(presented, model, characters) charged, for a call refused after it (a
  // full admission queue): the request, the characters to their bucket (up to its capacity) and to
  // the month (when it is still the month charged).
  void refund(std::string_view presented, std::int64_t characters);

  struct Usage {
    std::int64_t characters = 0;  // this month
    std::int64_t limit = 0;       // 0: none
  };
  // The month's usage of the tenant of `presented` (shared by its keys); nullopt for no tenant.
  std::optional<Usage> usage(std::string_view presented) const;

 private:
  struct Table;
  struct Tenant;
  std::shared_ptr<const Table> table() const;
  // Serves `specs` (reload_mutex_ held), carrying the usage of the tenants that keep their name;
  // returns what changed, for the log.
  std::string install(std::vector<TenantSpec> specs);

  std::shared_ptr<const TenantClock> clock_;
  mutable std::mutex table_mutex_;      // guards the pointer only: tables are immutable
  std::shared_ptr<const Table> table_;  // null: disabled
  std::mutex reload_mutex_;             // one replace() at a time
  std::string path_;                    // load()'s, for reload()
};

// Characters as the quotas count them: code points (bytes of text that is not UTF-8).
std::int64_t billed_characters(std::string_view text);

}  // namespace rpt::server
