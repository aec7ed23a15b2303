#include "server/translation_cache.h"

#include <bit>
#include <cstdint>
#include <algorithm>
#include <functional>
#include <iterator>

namespace rpt::server {

struct TranslationCache::Shard {
  struct Entry {
    std::string key;
    TranslationResult result;
    std::size_t bytes = 0;
    bool in_protected = false;
  };
  using Entries = std::list<Entry>;  // most recently used first
  mutable std::mutex mutex;          // guards all below
  Entries probation;                 // every entry under LRU
  Entries protected_entries;         // hit since they entered (segmented LRU)
  std::unordered_map<std::string_view, Entries::iterator> index;  // views of Entry::key
  std::size_t bytes = 0;
  std::size_t protected_bytes = 0;

  std::size_t size() const { return probation.size() + protected_entries.size(); }
};

namespace {

// What an entry holds on the heap, roughly: strings and vectors by capacity, plus the list
// node, the index slot and their bookkeeping.
std::size_t entry_bytes(const std::string& key, const TranslationResult& result) {
  constexpr std::size_t kOverhead = 160;
  std::size_t total =
      kOverhead + key.capacity() + result.hypotheses.capacity() * sizeof(TranslationHypothesis);
  for (const TranslationHypothesis& h : result.hypotheses) {
    total += h.text.capacity() + h.ids.capacity() * sizeof(int) +
             h.tokens.capacity() * sizeof(std::string);
    for (const std::string& token : h.tokens) total += token.capacity();
  }
  total += result.glossary_terms.capacity() * sizeof(GlossaryTermResult);
  for (const GlossaryTermResult& term : result.glossary_terms) {
    total += term.source.capacity() + term.target.capacity();
  }
  return total;
}

template <typename T>
void append_bytes(std::string& out, T value) {
  const auto* bytes = reinterpret_cast<const char*>(&value);
  out.append(bytes, sizeof(value));
}

}  // namespace

TranslationCache::TranslationCache(const TranslationCacheOptions& options, CacheMetrics metrics)
    : shard_bytes_(options.max_bytes / static_cast<std::size_t>(std::max(1, options.shards))),
      protected_bytes_(shard_bytes_ / 5 * 4),
      policy_(options.policy),
      metrics_(metrics) {
  for (int i = 0; i < std::max(1, options.shards); ++i) {
    shards_.push_back(std::make_unique<Shard>());
  }
}

TranslationCache::~TranslationCache() = default;

std::string TranslationCache::key(std::string_view text, const DecodingOptions& options,
                                  bool protect, std::string_view glossary,
                                  std::string_view prefix) {
  // Fixed-size options first, then the length-prefixed glossary and prefix, then the text: no
  // two distinct (options, glossary, prefix, text) meet.
  std::string key;
  key.reserve(40 + glossary.size() + prefix.size() + text.size());
  options.visit([&key](auto field) {  // every option (DecodingOptions::visit), 4 bytes each
    static_assert(sizeof(field) == 4);
    append_bytes(key, std::bit_cast<std::uint32_t>(field));
  });
  key.push_back(protect ? '\1' : '\0');
  append_bytes(key, static_cast<std::uint32_t>(glossary.size()));
  key.append(glossary);
  append_bytes(key, static_cast<std::uint32_t>(prefix.size()));
  key.append(prefix);
  key.append(text);
  return key;
}

TranslationCache::Shard& TranslationCache::shard_of(const std::string& key) {
  return *shards_[std::hash<std::string>{}(key) % shards_.size()];
}

std::optional<TranslationResult> TranslationCache::find(const std::string& key) {
  Shard& shard = shard_of(key);
  std::optional<TranslationResult> found;
  {
    std::lock_guard lock(shard.mutex);
    const auto at = shard.index.find(key);
    if (at != shard.index.end()) {
      Shard::Entry& entry = *at->second;
      if (policy_ == CachePolicy::kLru) {
        shard.probation.splice(shard.probation.begin(), shard.probation, at->second);
      } else if (entry.in_protected) {
        shard.protected_entries.splice(shard.protected_entries.begin(), shard.protected_entries,
                                       at->second);
      } else {
        // Promoted; protected's least recent go back to probation's front past its share.
        entry.in_protected = true;
        shard.protected_bytes += entry.bytes;
        shard.protected_entries.splice(shard.protected_entries.begin(), shard.probation,
                                       at->second);
        while (shard.protected_bytes > protected_bytes_ && shard.protected_entries.size() > 1) {
          Shard::Entry& demoted = shard.protected_entries.back();
          demoted.in_protected = false;
          shard.protected_bytes -= demoted.bytes;
          shard.probation.splice(shard.probation.begin(), shard.protected_entries,
                                 std::prev(shard.protected_entries.end()));
        }
      }
      found = entry.result;
    }
  }
  prometheus::Counter* counter = found ? metrics_.hits : metrics_.misses;
  if (counter != nullptr) counter->Increment();
  return found;
}

void TranslationCache::insert(const std::string& key, const TranslationResult& result) {
  const std::size_t bytes = entry_bytes(key, result);
  if (bytes > shard_bytes_) return;
  Shard& shard = shard_of(key);
  long added_entries = 0;
  long added_bytes = 0;
  long evicted = 0;
  {
    std::lock_guard lock(shard.mutex);
    if (shard.index.contains(key)) return;  // decoded twice at once: the results are the same
    while (shard.bytes + bytes > shard_bytes_ && shard.size() > 0) {
      Shard::Entries& from = shard.probation.empty() ? shard.protected_entries : shard.probation;
      const Shard::Entry& oldest = from.back();
      shard.bytes -= oldest.bytes;
      if (oldest.in_protected) shard.protected_bytes -= oldest.bytes;
      added_bytes -= static_cast<long>(oldest.bytes);
      --added_entries;
      ++evicted;
      shard.index.erase(oldest.key);
      from.pop_back();
    }
    shard.probation.push_front({key, result, bytes});
    shard.index.emplace(shard.probation.front().key, shard.probation.begin());
    shard.bytes += bytes;
    added_bytes += static_cast<long>(bytes);
    ++added_entries;
  }
  if (metrics_.evictions != nullptr && evicted > 0) {
    metrics_.evictions->Increment(static_cast<double>(evicted));
  }
  add_gauges(added_entries, added_bytes);
}

void TranslationCache::add_gauges(long entries, long bytes) {
  if (metrics_.entries != nullptr) metrics_.entries->Increment(static_cast<double>(entries));
  if (metrics_.bytes != nullptr) metrics_.bytes->Increment(static_cast<double>(bytes));
}

std::size_t TranslationCache::bytes() const {
  std::size_t total = 0;
  for (const auto& shard : shards_) {
    std::lock_guard lock(shard->mutex);
    total += shard->bytes;
  }
  return total;
}

std::size_t TranslationCache::entries() const {
  std::size_t total = 0;
  for (const auto& shard : shards_) {
    std::lock_guard lock(shard->mutex);
    total += shard->size();
  }
  return total;
}

}  // namespace rpt::server
