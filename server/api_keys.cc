#include "server/api_keys.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "common/text_hygiene.h"

namespace rpt::server {
namespace {

int current_month() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  return (utc.tm_year + 1900) * 12 + utc.tm_mon;
}

bool valid_key(std::string_view key) {
  return key.size() >= 16 && key.size() <= 256 &&
         std::all_of(key.begin(), key.end(), [](char c) { return c > ' ' && c < 127; });
}

}  // namespace

std::int64_t billed_characters(std::string_view text) {
  if (!is_valid_utf8(text)) return static_cast<std::int64_t>(text.size());
  return std::count_if(text.begin(), text.end(),
                       [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; });
}

ApiKeys::ApiKeys(ApiKeys&& other) noexcept
    : keys_(std::move(other.keys_)),
      by_key_(std::move(other.by_key_)),
      used_(std::move(other.used_)) {}

ApiKeys ApiKeys::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument("--api-keys: cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  return parse(text.str(), path);
}

ApiKeys ApiKeys::parse(std::string_view text, const std::string& where) {
  ApiKeys keys;
  std::size_t number = 0;
  for (std::size_t begin = 0; begin < text.size();) {
    const std::size_t end = std::min(text.find('\n', begin), text.size());
    std::string line(text.substr(begin, end - begin));
    begin = end + 1;
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    const auto fail = [&](const std::string& why) {
      throw std::invalid_argument("--api-keys " + where + " line " + std::to_string(number) + ": " +
                                  why);
    };
    std::vector<std::string> fields;
    for (std::size_t at = 0; at <= line.size();) {
      const std::size_t tab = std::min(line.find('\t', at), line.size());
      fields.push_back(line.substr(at, tab - at));
      at = tab + 1;
    }
    if (fields.size() < 2 || fields.size() > 3) fail("want KEY<TAB>NAME[<TAB>CHARACTERS]");
    if (!valid_key(fields[0])) fail("a key is 16-256 printable ASCII characters, no spaces");
    if (fields[1].empty() || !is_valid_utf8(fields[1])) fail("the name is empty or not UTF-8");
    ApiKey key{fields[0], fields[1], 0};
    if (fields.size() == 3) {
      char* rest = nullptr;
      const long long limit = std::strtoll(fields[2].c_str(), &rest, 10);
      if (fields[2].empty() || *rest != '\0' || limit < 0) {
        fail("the monthly characters must be a whole number >= 0");
      }
      key.monthly_characters = limit;
    }
    if (keys.by_key_.contains(key.key)) fail("the key is listed twice");
    keys.by_key_.emplace(key.key, keys.keys_.size());
    keys.keys_.push_back(std::move(key));
  }
  if (keys.keys_.empty()) throw std::invalid_argument("--api-keys " + where + " lists no key");
  keys.used_.resize(keys.keys_.size());
  return keys;
}

const ApiKey* ApiKeys::find(std::string_view presented) const {
  const auto found = by_key_.find(std::string(presented));
  return found == by_key_.end() ? nullptr : &keys_[found->second];
}

RequestStatus ApiKeys::authorize(std::string_view presented, std::int64_t characters) {
  if (!enabled()) return RequestStatus::Ok();
  if (presented.empty()) {
    return {StatusCode::kUnauthenticated,
            "this server needs an API key: Authorization: Bearer <key> (gRPC metadata "
            "authorization; LibreTranslate's api_key; DeepL's DeepL-Auth-Key)"};
  }
  const ApiKey* key = find(presented);
  if (key == nullptr) return {StatusCode::kUnauthenticated, "the API key is not valid"};
  const std::size_t index = static_cast<std::size_t>(key - keys_.data());
  const int month = current_month();
  std::lock_guard lock(mutex_);
  Month& used = used_[index];
  if (used.month != month) used = {month, 0};
  if (key->monthly_characters > 0 && used.characters + characters > key->monthly_characters) {
    return {StatusCode::kQuotaExceeded,
            "the key's quota of " + std::to_string(key->monthly_characters) +
                " characters this month would be passed (" + std::to_string(used.characters) +
                " used, " + std::to_string(characters) + " asked); it renews on the 1st (UTC)"};
  }
  used.characters += characters;
  return RequestStatus::Ok();
}

ApiKeys::Usage ApiKeys::usage(const ApiKey& key) const {
  const std::size_t index = static_cast<std::size_t>(&key - keys_.data());
  std::lock_guard lock(mutex_);
  const Month& used = used_[index];
  return {used.month == current_month() ? used.characters : 0, key.monthly_characters};
}

}  // namespace rpt::server
