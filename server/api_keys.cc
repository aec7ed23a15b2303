#include "server/api_keys.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

#include "common/text_hygiene.h"

namespace rpt::server {

struct TenantUsage {
  std::mutex mutex;
  int month = 0;  // of `characters`
  std::int64_t characters = 0;
  TokenBucket requests;
  TokenBucket characters_bucket;
};

namespace {

bool valid_key(std::string_view key) {
  return key.size() >= 16 && key.size() <= 256 &&
         std::all_of(key.begin(), key.end(), [](char c) { return c > ' ' && c < 127; });
}

bool valid_name(std::string_view name) {
  return !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  });
}

struct DigestHash {
  std::size_t operator()(const KeyDigest& digest) const {
    std::size_t hash = 0;
    std::memcpy(&hash, digest.data(), sizeof(hash));  // a digest's bytes are already uniform
    return hash;
  }
};

struct DigestEqual {
  bool operator()(const KeyDigest& a, const KeyDigest& b) const {
    return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
  }
};

// The bucket parameters of a spec: (rate per second, capacity).
std::pair<double, double> request_bucket(const TenantSpec& spec) {
  return {spec.requests_per_second, spec.requests_per_second * spec.burst_seconds};
}
std::pair<double, double> character_bucket(const TenantSpec& spec) {
  const double rate = spec.characters_per_minute / 60.0;
  return {rate, rate * spec.burst_seconds};
}

std::string number_text(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

// Reads the YAML tree of the keys file into specs; every error names `where` and the line.
class SpecReader {
 public:
  explicit SpecReader(const std::string& where) : where_(where) {}

  [[noreturn]] void fail(const YAML::Mark& mark, const std::string& why) const {
    std::string at = "--api-keys " + where_;
    if (mark.line >= 0) at += " line " + std::to_string(mark.line + 1);
    throw std::invalid_argument(at + ": " + why);
  }

  std::vector<TenantSpec> read(const YAML::Node& root) {
    if (root.IsNull()) fail(root.Mark(), "the file lists no tenant (want `tenants:`)");
    if (!root.IsMap()) fail(root.Mark(), "the file must be a mapping with one field, `tenants`");
    YAML::Node tenants;
    bool listed = false;
    std::set<std::string> seen;
    for (auto it = root.begin(); it != root.end(); ++it) {
      const YAML::Node key = it->first;  // copies: the iterator's pair is a temporary
      const std::string field = field_name(key, seen);
      if (field != "tenants") {
        fail(key.Mark(), "unknown field " + echo(field) + " (the file has `tenants:`)");
      }
      tenants = it->second;
      listed = true;
    }
    if (!listed) fail(root.Mark(), "the file lists no tenant (want `tenants:`)");
    if (!tenants.IsSequence() || tenants.size() == 0) {
      fail(tenants.Mark(), "`tenants` must be a list of one tenant or more");
    }
    std::vector<TenantSpec> specs;
    for (const YAML::Node& tenant : tenants) specs.push_back(read_tenant(tenant));
    return specs;
  }

 private:
  // A field name as an error shows it: only one that looks like a field name (a-z and _, at most
  // 32), lest a key pasted in the wrong place reach the log.
  static std::string echo(const std::string& name) {
    const bool plain = !name.empty() && name.size() <= 32 &&
                       std::all_of(name.begin(), name.end(),
                                   [](char c) { return (c >= 'a' && c <= 'z') || c == '_'; });
    return plain ? "'" + name + "'" : "(" + std::to_string(name.size()) + " characters, not shown)";
  }

  std::string field_name(const YAML::Node& key, std::set<std::string>& seen) const {
    if (!key.IsScalar()) fail(key.Mark(), "a field name must be a plain word");
    const std::string& name = key.Scalar();
    if (!seen.insert(name).second) fail(key.Mark(), "the field " + echo(name) + " is given twice");
    return name;
  }

  std::string scalar(const YAML::Node& node, const std::string& what) const {
    if (!node.IsScalar()) fail(node.Mark(), what + " must be a string");
    return node.Scalar();
  }

  std::vector<std::string> strings(const YAML::Node& node, const std::string& what) const {
    if (!node.IsSequence() || node.size() == 0) {
      fail(node.Mark(), what + " must be a list of one string or more, e.g. [a, b]");
    }
    std::vector<std::string> out;
    for (const YAML::Node& item : node) out.push_back(scalar(item, "each of " + what));
    return out;
  }

  // A plain (unquoted) scalar that is a finite number >= 0.
  double number(const YAML::Node& node, const std::string& what) const {
    const std::string why = what + " must be a number >= 0";
    if (!node.IsScalar() || node.Tag() != "?") fail(node.Mark(), why);
    const std::string& text = node.Scalar();
    double value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(value) ||
        value < 0) {
      fail(node.Mark(), why);
    }
    return value;
  }

  std::int64_t whole(const YAML::Node& node, const std::string& what, std::int64_t low,
                     std::int64_t high) const {
    const std::string why = what + " must be a whole number from " + std::to_string(low) +
                            (high == INT64_MAX ? " up" : " to " + std::to_string(high));
    if (!node.IsScalar() || node.Tag() != "?") fail(node.Mark(), why);
    const std::string& text = node.Scalar();
    std::int64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || value < low || value > high) {
      fail(node.Mark(), why);
    }
    return value;
  }

  TenantSpec read_tenant(const YAML::Node& node) {
    if (!node.IsMap()) fail(node.Mark(), "a tenant must be a mapping (name:, keys:, ...)");
    TenantSpec spec;
    bool named = false;
    bool keyed = false;
    std::set<std::string> seen;
    for (auto it = node.begin(); it != node.end(); ++it) {
      const YAML::Node field_node = it->first;  // copies: the iterator's pair is a temporary
      const YAML::Node value = it->second;
      const std::string field = field_name(field_node, seen);
      if (field == "name") {
        spec.name = scalar(value, "name");
        if (!valid_name(spec.name)) {
          fail(value.Mark(), "a tenant's name is 1-64 of A-Z a-z 0-9 . _ -");
        }
        if (!names_.insert(spec.name).second) {
          fail(value.Mark(), "the tenant name '" + spec.name + "' is listed twice");
        }
        named = true;
      } else if (field == "keys") {
        const std::vector<std::string> keys = strings(value, "keys");
        std::size_t index = 0;
        for (const YAML::Node& item : value) {
          const std::string& key = keys[index++];
          if (!valid_key(key)) {
            fail(item.Mark(), "a key is 16-256 printable ASCII characters, no spaces");
          }
          const KeyDigest digest = key_digest(key);
          const int line = item.Mark().line + 1;
          const auto [listed, added] = key_lines_.emplace(digest, line);
          if (!added) {
            fail(item.Mark(), "the " + key_label(digest) + " is listed twice (also line " +
                                  std::to_string(listed->second) + ")");
          }
          spec.keys.push_back(digest);
        }
        keyed = true;
      } else if (field == "models") {
        spec.models = strings(value, "models");
      } else if (field == "requests_per_second") {
        spec.requests_per_second = number(value, field);
      } else if (field == "characters_per_minute") {
        spec.characters_per_minute = number(value, field);
      } else if (field == "burst_seconds") {
        spec.burst_seconds = number(value, field);
        if (spec.burst_seconds <= 0) fail(value.Mark(), "burst_seconds must be a number > 0");
      } else if (field == "characters_per_month") {
        spec.characters_per_month = whole(value, field, 0, INT64_MAX);
      } else if (field == "priority") {
        spec.priority = static_cast<int>(whole(value, field, 1, 10));
      } else {
        fail(field_node.Mark(),
             "unknown field " + echo(field) +
                 " (a tenant has name, keys, models, requests_per_second, "
                 "characters_per_minute, burst_seconds, characters_per_month, priority)");
      }
    }
    if (!named) fail(node.Mark(), "the tenant has no name");
    if (!keyed) fail(node.Mark(), "the tenant '" + spec.name + "' has no keys");
    return spec;
  }

  const std::string& where_;
  std::set<std::string> names_;
  std::map<KeyDigest, int> key_lines_;  // every key of the file: its line
};

class RealClock final : public TenantClock {};

}  // namespace

KeyDigest key_digest(std::string_view key) {
  KeyDigest digest;
  SHA256(reinterpret_cast<const unsigned char*>(key.data()), key.size(), digest.data());
  return digest;
}

std::string key_label(const KeyDigest& digest) {
  static const char* const kHex = "0123456789abcdef";
  std::string label = "key sha256:";
  for (int i = 0; i < 4; ++i) {
    label += kHex[digest[i] >> 4];
    label += kHex[digest[i] & 15];
  }
  return label;
}

std::string key_label(std::string_view key) { return key_label(key_digest(key)); }

bool TenantSpec::may_use(std::string_view model) const {
  return !models.has_value() || std::find(models->begin(), models->end(), model) != models->end();
}

std::chrono::steady_clock::time_point TenantClock::now() const {
  return std::chrono::steady_clock::now();
}

int TenantClock::month() const {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  return (utc.tm_year + 1900) * 12 + utc.tm_mon;
}

TokenBucket::TokenBucket(double rate, double capacity, TimePoint now)
    : rate_(rate), capacity_(capacity), tokens_(capacity), last_(now) {}

void TokenBucket::refill(TimePoint now) {
  if (now > last_) {
    const double elapsed = std::chrono::duration<double>(now - last_).count();
    tokens_ = std::min(capacity_, tokens_ + elapsed * rate_);
    last_ = now;
  }
}

double TokenBucket::tokens(TimePoint now) {
  refill(now);
  return tokens_;
}

double TokenBucket::wait_seconds(double cost, TimePoint now) {
  if (unlimited()) return 0;
  refill(now);
  const double need = std::min(cost, capacity_);
  constexpr double kSlack = 1e-9;  // rounding of the refill
  if (tokens_ + kSlack >= need) return 0;
  return (need - tokens_) / rate_;
}

void TokenBucket::take(double cost, TimePoint now) {
  if (unlimited()) return;
  refill(now);
  tokens_ -= cost;
}

void TokenBucket::give_back(double cost, TimePoint now) {
  if (unlimited()) return;
  refill(now);
  tokens_ = std::min(capacity_, tokens_ + cost);
}

void TokenBucket::reconfigure(double rate, double capacity, TimePoint now) {
  if (unlimited()) {
    *this = TokenBucket(rate, capacity, now);
    return;
  }
  refill(now);
  rate_ = rate;
  capacity_ = capacity;
  tokens_ = std::min(tokens_, capacity_);
}

struct ApiKeys::Tenant {
  TenantSpec spec;
  std::shared_ptr<TenantUsage> usage;
};

struct ApiKeys::Table {
  std::vector<Tenant> tenants;
  std::unordered_map<KeyDigest, std::size_t, DigestHash, DigestEqual> by_digest;

  const Tenant* find(std::string_view presented) const {
    const auto found = by_digest.find(key_digest(presented));
    return found == by_digest.end() ? nullptr : &tenants[found->second];
  }
  const Tenant* find_name(const std::string& name) const {
    for (const Tenant& tenant : tenants) {
      if (tenant.spec.name == name) return &tenant;
    }
    return nullptr;
  }
};

namespace {

RequestStatus unknown_key(std::string_view presented) {
  if (presented.empty()) {
    return {StatusCode::kUnauthenticated,
            "this server needs an API key: Authorization: Bearer <key> (gRPC metadata "
            "authorization; LibreTranslate's api_key; DeepL's DeepL-Auth-Key)"};
  }
  return {StatusCode::kUnauthenticated,
          "the API key is not valid (" + key_label(presented) + " is not listed)"};
}

std::string model_list(const TenantSpec& spec) {
  std::string list;
  for (const std::string& model : *spec.models) list += (list.empty() ? "" : ", ") + model;
  return list;
}

}  // namespace

std::int64_t billed_characters(std::string_view text) {
  if (!is_valid_utf8(text)) return static_cast<std::int64_t>(text.size());
  return std::count_if(text.begin(), text.end(),
                       [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; });
}

ApiKeys::ApiKeys(std::shared_ptr<const TenantClock> clock)
    : clock_(clock != nullptr ? std::move(clock) : std::make_shared<RealClock>()) {}

ApiKeys::~ApiKeys() = default;

std::vector<TenantSpec> ApiKeys::parse(std::string_view text, const std::string& where) {
  SpecReader reader(where);
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::DeepRecursion& error) {  // its message says "bad file"
    reader.fail(error.mark, "lists and mappings nested too deep");
  } catch (const YAML::Exception& error) {
    reader.fail(error.mark, error.msg);
  }
  try {
    return reader.read(root);
  } catch (const YAML::Exception& error) {  // a conversion the reader did not foresee
    reader.fail(error.mark, error.msg);
  }
}

namespace {

std::string read_keys_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument("--api-keys: cannot read " + path);
  // Read through the stream, whose failures (a directory: EISDIR) set its bad bit; copying its
  // rdbuf() would end such a read as an empty file.
  std::string text;
  for (char buffer[4096]; in.read(buffer, sizeof buffer) || in.gcount() > 0;) {
    text.append(buffer, static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) throw std::invalid_argument("--api-keys: cannot read " + path);
  return text;
}

}  // namespace

void ApiKeys::load(const std::string& path) {
  std::lock_guard reloading(reload_mutex_);
  path_ = path;
  install(parse(read_keys_file(path), path));
}

void ApiKeys::replace(std::string_view text, const std::string& where) {
  std::lock_guard reloading(reload_mutex_);
  install(parse(text, where));
}

ApiKeys::Reload ApiKeys::reload() {
  std::lock_guard reloading(reload_mutex_);
  if (path_.empty()) return {false, "the server was started without --api-keys: nothing to reload"};
  try {
    return {true, install(parse(read_keys_file(path_), path_))};
  } catch (const std::invalid_argument& error) {
    return {false, std::string(error.what()) + "; the previous keys stay"};
  }
}

std::string ApiKeys::install(std::vector<TenantSpec> specs) {
  const std::shared_ptr<const Table> old = table();
  const auto now = clock_->now();
  auto fresh = std::make_shared<Table>();
  fresh->tenants.reserve(specs.size());
  std::string changes;
  const auto note = [&changes](const std::string& change) {
    changes += (changes.empty() ? "" : "; ") + change;
  };
  std::size_t keys = 0;
  for (TenantSpec& spec : specs) {
    const Tenant* before = old != nullptr ? old->find_name(spec.name) : nullptr;
    std::shared_ptr<TenantUsage> usage;
    const auto [request_rate, request_capacity] = request_bucket(spec);
    const auto [character_rate, character_capacity] = character_bucket(spec);
    if (before != nullptr) {  // the same tenant: its month and buckets carry over
      usage = before->usage;
      std::lock_guard lock(usage->mutex);
      usage->requests.reconfigure(request_rate, request_capacity, now);
      usage->characters_bucket.reconfigure(character_rate, character_capacity, now);
      for (const KeyDigest& digest : spec.keys) {
        if (std::find(before->spec.keys.begin(), before->spec.keys.end(), digest) ==
            before->spec.keys.end()) {
          note("tenant " + spec.name + ": " + key_label(digest) + " added");
        }
      }
      for (const KeyDigest& digest : before->spec.keys) {
        if (std::find(spec.keys.begin(), spec.keys.end(), digest) == spec.keys.end()) {
          note("tenant " + spec.name + ": " + key_label(digest) + " revoked");
        }
      }
    } else {
      usage = std::make_shared<TenantUsage>();
      usage->requests = TokenBucket(request_rate, request_capacity, now);
      usage->characters_bucket = TokenBucket(character_rate, character_capacity, now);
      if (old != nullptr) note("tenant " + spec.name + " added");
    }
    for (const KeyDigest& digest : spec.keys) {
      fresh->by_digest.emplace(digest, fresh->tenants.size());
    }
    keys += spec.keys.size();
    fresh->tenants.push_back({std::move(spec), std::move(usage)});
  }
  if (old != nullptr) {
    for (const Tenant& tenant : old->tenants) {
      if (fresh->find_name(tenant.spec.name) == nullptr) {
        note("tenant " + tenant.spec.name + " removed");
      }
    }
  }
  const std::string summary =
      std::to_string(fresh->tenants.size()) + " tenant(s), " + std::to_string(keys) + " key(s)";
  {
    std::lock_guard lock(table_mutex_);
    table_ = std::move(fresh);
  }
  return summary + (changes.empty() ? std::string(old != nullptr ? "; no change of keys" : "")
                                    : "; " + changes);
}

std::shared_ptr<const ApiKeys::Table> ApiKeys::table() const {
  std::lock_guard lock(table_mutex_);
  return table_;
}

bool ApiKeys::enabled() const { return table() != nullptr; }

std::vector<TenantSpec> ApiKeys::tenants() const {
  std::vector<TenantSpec> specs;
  if (const std::shared_ptr<const Table> current = table()) {
    for (const Tenant& tenant : current->tenants) specs.push_back(tenant.spec);
  }
  return specs;
}

std::optional<std::string> ApiKeys::tenant_name(std::string_view presented) const {
  std::optional<TenantIdentity> identity = identify(presented);
  if (!identity.has_value()) return std::nullopt;
  return std::move(identity->name);
}

std::optional<TenantIdentity> ApiKeys::identify(std::string_view presented) const {
  const std::shared_ptr<const Table> current = table();
  const Tenant* tenant = current != nullptr ? current->find(presented) : nullptr;
  if (tenant == nullptr) return std::nullopt;
  return TenantIdentity{tenant->spec.name, tenant->spec.priority};
}

RequestStatus ApiKeys::authenticate(std::string_view presented) const {
  const std::shared_ptr<const Table> current = table();
  if (current == nullptr || current->find(presented) != nullptr) return RequestStatus::Ok();
  return unknown_key(presented);
}

RequestStatus ApiKeys::check_model(std::string_view presented, std::string_view model) const {
  const std::shared_ptr<const Table> current = table();
  if (current == nullptr) return RequestStatus::Ok();
  const Tenant* tenant = current->find(presented);
  if (tenant == nullptr) return unknown_key(presented);
  if (tenant->spec.may_use(model)) return RequestStatus::Ok();
  return {StatusCode::kPermissionDenied, "tenant " + tenant->spec.name +
                                             " may not use the model '" + std::string(model) +
                                             "' (its models: " + model_list(tenant->spec) + ")"};
}

RequestStatus ApiKeys::admit(std::string_view presented, std::optional<std::string_view> model,
                             std::int64_t characters) {
  const std::shared_ptr<const Table> current = table();
  if (current == nullptr) return RequestStatus::Ok();
  if (model.has_value()) {
    if (RequestStatus allowed = check_model(presented, *model); !allowed.ok()) return allowed;
  }
  const Tenant* tenant = current->find(presented);
  if (tenant == nullptr) return unknown_key(presented);
  const TenantSpec& spec = tenant->spec;
  TenantUsage& usage = *tenant->usage;
  const auto now = clock_->now();
  const int month = clock_->month();
  std::lock_guard lock(usage.mutex);
  if (usage.month != month) {
    usage.month = month;
    usage.characters = 0;
  }
  if (spec.characters_per_month > 0 && usage.characters + characters > spec.characters_per_month) {
    return {StatusCode::kQuotaExceeded,
            "tenant " + spec.name + "'s quota of " + std::to_string(spec.characters_per_month) +
                " characters this month would be passed (" + std::to_string(usage.characters) +
                " used, " + std::to_string(characters) + " asked); it renews on the 1st (UTC)"};
  }
  const double request_wait = usage.requests.wait_seconds(1, now);
  const double character_wait =
      usage.characters_bucket.wait_seconds(static_cast<double>(characters), now);
  const double wait = std::max(request_wait, character_wait);
  if (wait > 0) {
    constexpr double kLongest = 366.0 * 86400;  // rates so low they say "not this year"
    const int seconds = std::max(1, static_cast<int>(std::ceil(std::min(wait, kLongest) - 1e-9)));
    std::string limit;
    if (request_wait > 0) limit = number_text(spec.requests_per_second) + " requests a second";
    if (character_wait > 0) {
      limit += (limit.empty() ? "" : " and ") + number_text(spec.characters_per_minute) +
               " characters a minute";
    }
    return {StatusCode::kResourceExhausted,
            "tenant " + spec.name + " is over its rate of " + limit + "; retry after " +
                std::to_string(seconds) + " s",
            seconds};
  }
  usage.requests.take(1, now);
  usage.characters_bucket.take(static_cast<double>(characters), now);
  usage.characters += characters;
  return RequestStatus::Ok();
}

void ApiKeys::refund(std::string_view presented, std::int64_t characters) {
  const std::shared_ptr<const Table> current = table();
  const Tenant* tenant = current != nullptr ? current->find(presented) : nullptr;
  if (tenant == nullptr) return;
  TenantUsage& usage = *tenant->usage;
  const auto now = clock_->now();
  const int month = clock_->month();
  std::lock_guard lock(usage.mutex);
  usage.requests.give_back(1, now);
  usage.characters_bucket.give_back(static_cast<double>(characters), now);
  if (usage.month == month)
    usage.characters = std::max<std::int64_t>(0, usage.characters - characters);
}

std::optional<ApiKeys::Usage> ApiKeys::usage(std::string_view presented) const {
  const std::shared_ptr<const Table> current = table();
  const Tenant* tenant = current != nullptr ? current->find(presented) : nullptr;
  if (tenant == nullptr) return std::nullopt;
  const int month = clock_->month();
  std::lock_guard lock(tenant->usage->mutex);
  return Usage{tenant->usage->month == month ? tenant->usage->characters : 0,
               tenant->spec.characters_per_month};
}

}  // namespace rpt::server
