// An exact cache of finished sentences for one model (rpt-server --cache-size). A sentence's
// translation does not depend on what it is batched with (tested bit for bit), so a cached
// result is exactly what decoding it again would give: the cache changes nothing but speed.
//
// Key: the raw text and every option that changes the result (beam, n-best, lengths, length
// penalty, span protection); return_scores / return_tokens only filter what is sent, so the
// whole result is kept. Bounded by bytes (an estimate of each entry's heap use), least recently
// used first out, in shards with a mutex each so that concurrent calls rarely contend.
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <prometheus/counter.h>
#include <prometheus/gauge.h>

#include "engine/beam_search.h"
#include "engine/translator.h"

namespace rpt::server {

// The cache's metrics for one model (Metrics::add_cache); any may be null.
struct CacheMetrics {
  prometheus::Counter* hits = nullptr;
  prometheus::Counter* misses = nullptr;
  prometheus::Counter* evictions = nullptr;
  prometheus::Gauge* bytes = nullptr;
  prometheus::Gauge* entries = nullptr;
};

class TranslationCache {
 public:
  // `max_bytes` > 0: the bound on the entries' estimated size, split evenly over the shards.
  TranslationCache(std::size_t max_bytes, CacheMetrics metrics, int shards = 16);
  ~TranslationCache();
  TranslationCache(const TranslationCache&) = delete;
  TranslationCache& operator=(const TranslationCache&) = delete;

  // The key of `text` decoded with `options`, span protection on or off.
  static std::string key(std::string_view text, const DecodingOptions& options, bool protect);

  // The cached result of `key` (now the most recently used), counted as a hit or a miss.
  std::optional<TranslationResult> find(const std::string& key);
  // Stores (or refreshes) `key`; evicts the least recently used entries of its shard to stay
  // within the bound. An entry larger than a whole shard is not stored.
  void insert(const std::string& key, const TranslationResult& result);

  std::size_t bytes() const;
  std::size_t entries() const;

 private:
  struct Shard;
  Shard& shard_of(const std::string& key);
  void add_gauges(long entries, long bytes);

  std::size_t shard_bytes_;
  CacheMetrics metrics_;
  std::vector<std::unique_ptr<Shard>> shards_;
};

}  // namespace rpt::server
