// An exact cache of finished sentences for one model (rpt-server --cache-size). A sentence's
// translation does not depend on what it is batched with (tested bit for bit), so a cached
// result is exactly what decoding it again would give: the cache changes nothing but speed.
//
// Key: the raw text, the prefix the model reads before it (its language pair's: a multilingual
// model's directions never share entries) and every option that changes the result (beam,
// n-best, lengths, length penalty, span protection, the glossaries' identity); return_scores /
// return_tokens only filter
// what is sent, so the whole result is kept. Bounded by bytes (an estimate of each entry's heap
// use), in shards with a mutex each so that concurrent calls rarely contend. Eviction is segmented
// LRU by default: an entry enters a probation segment and moves to a protected one (80% of the
// bytes) when it is hit, so a one-off run of new sentences (a batch job over new content) evicts
// other one-offs, not the sentences that keep coming back; plain LRU is kept for comparison
// (bench/cache_policy_bench.cc measured both: docs/capacity.md).
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

enum class CachePolicy {
  kLru,           // least recently used out
  kSegmentedLru,  // probation + protected segments (scan-resistant)
};

struct TranslationCacheOptions {
  std::size_t max_bytes = 0;  // > 0: the bound on the entries' estimated size
  int shards = 16;            // the bound is split evenly over them
  CachePolicy policy = CachePolicy::kSegmentedLru;
};

class TranslationCache {
 public:
  TranslationCache(const TranslationCacheOptions& options, CacheMetrics metrics);
  ~TranslationCache();
  TranslationCache(const TranslationCache&) = delete;
  TranslationCache& operator=(const TranslationCache&) = delete;

  // The key of `text` read after `prefix` (its language pair's, Model::language_pairs) and
  // decoded with `options`, span protection on or off, with the glossaries of `glossary`
  // (GlossaryUse::identity(); empty: none).
  static std::string key(std::string_view text, const DecodingOptions& options, bool protect,
                         std::string_view glossary = {}, std::string_view prefix = {});

  // The cached result of `key` (now the most recently used), counted as a hit or a miss.
  std::optional<TranslationResult> find(const std::string& key);
  // Stores (or refreshes) `key`; evicts entries of its shard to stay within the bound (under
  // segmented LRU probation's least recent first). An entry larger than a whole shard is not
  // stored.
  void insert(const std::string& key, const TranslationResult& result);

  std::size_t bytes() const;
  std::size_t entries() const;

 private:
  struct Shard;
  Shard& shard_of(const std::string& key);
  void add_gauges(long entries, long bytes);

  std::size_t shard_bytes_;
  std::size_t protected_bytes_;  // per shard, under segmented LRU
  CachePolicy policy_;
  CacheMetrics metrics_;
  std::vector<std::unique_ptr<Shard>> shards_;
};

}  // namespace rpt::server
