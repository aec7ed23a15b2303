// Hit ratios of the translation cache's eviction policies (server/translation_cache.h) on
// request streams shaped like a localisation pipeline's, through the real cache (16 shards,
// byte-bounded, the server's entry estimate). Not a timing: hits / requests, deterministic.
//
//   cache_policy_bench TSV...      (source TAB reference lines: the demo test splits)
//
// Streams, 300,000 requests each over the splits' distinct sources (the cached result holds the
// reference as its text and its words as tokens, about a real entry's size):
//   zipf        popularity Zipf(1.0) over the sentences, ranks shuffled (bench/capacity.py's
//               profile)
//   zipf+scans  the same, and every 30,000 requests a batch job of 5,000 new sentences seen once
//               (new content through the same server)
// Cache sizes: shares of the bytes all distinct sentences of the Zipf stream would take.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "server/translation_cache.h"

namespace {

using rpt::server::CachePolicy;
using rpt::server::TranslationCache;

struct Sentence {
  std::string source;
  rpt::TranslationResult result;
};

rpt::TranslationResult result_of(const std::string& reference) {
  rpt::TranslationHypothesis hypothesis;
  hypothesis.text = reference;
  std::istringstream words(reference);
  for (std::string word; words >> word;) {
    hypothesis.tokens.push_back("▁" + word);
    hypothesis.ids.push_back(static_cast<int>(hypothesis.ids.size()));
  }
  rpt::TranslationResult result;
  result.hypotheses.push_back(std::move(hypothesis));
  return result;
}

std::vector<Sentence> read_distinct(const std::vector<std::string>& paths) {
  std::vector<Sentence> sentences;
  std::vector<std::string> seen;
  for (const std::string& path : paths) {
    std::ifstream file(path);
    for (std::string line; std::getline(file, line);) {
      const auto tab = line.find('\t');
      if (tab == std::string::npos) continue;
      std::string source = line.substr(0, tab);
      if (std::find(seen.begin(), seen.end(), source) != seen.end()) continue;
      seen.push_back(source);
      sentences.push_back({std::move(source), result_of(line.substr(tab + 1))});
    }
  }
  return sentences;
}

// Request i's sentence index; -1 - j: the j-th one-off sentence of a scan.
std::vector<long> stream(std::size_t sentences, bool scans, std::uint32_t seed) {
  constexpr long kRequests = 300000, kScanEvery = 30000, kScanLength = 5000;
  std::mt19937 random(seed);
  std::vector<double> weights(sentences);
  for (std::size_t r = 0; r < sentences; ++r) weights[r] = 1.0 / static_cast<double>(r + 1);
  std::discrete_distribution<long> rank(weights.begin(), weights.end());
  std::vector<long> by_rank(sentences);
  for (std::size_t i = 0; i < sentences; ++i) by_rank[i] = static_cast<long>(i);
  std::shuffle(by_rank.begin(), by_rank.end(), random);
  std::vector<long> requests;
  long one_offs = 0;
  for (long i = 0; i < kRequests; ++i) {
    if (scans && i > 0 && i % kScanEvery == 0) {
      for (long j = 0; j < kScanLength; ++j) requests.push_back(-1 - one_offs++);
    }
    requests.push_back(by_rank[static_cast<std::size_t>(rank(random))]);
  }
  return requests;
}

double hit_ratio(const std::vector<Sentence>& sentences, const std::vector<long>& requests,
                 std::size_t max_bytes, CachePolicy policy) {
  TranslationCache cache({.max_bytes = max_bytes, .policy = policy}, {});
  long hits = 0;
  for (const long request : requests) {
    const Sentence& sentence = sentences[static_cast<std::size_t>(
        request >= 0 ? request : (-1 - request) % static_cast<long>(sentences.size()))];
    const std::string text = request >= 0
                                 ? sentence.source
                                 : "job " + std::to_string(-1 - request) + ": " + sentence.source;
    const std::string key = TranslationCache::key(text, {}, true);
    if (cache.find(key)) {
      ++hits;
    } else {
      cache.insert(key, sentence.result);
    }
  }
  return static_cast<double>(hits) / static_cast<double>(requests.size());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: cache_policy_bench TSV...\n");
    return 2;
  }
  const std::vector<Sentence> sentences = read_distinct({argv + 1, argv + argc});
  // The bytes every distinct sentence would take: a cache that large misses only first sights.
  TranslationCache everything({.max_bytes = std::size_t{1} << 34}, {});
  for (const Sentence& s : sentences) {
    everything.insert(TranslationCache::key(s.source, {}, true), s.result);
  }
  const std::size_t all_bytes = everything.bytes();
  std::printf("%zu distinct sentences, %.2f MiB as cache entries\n\n", sentences.size(),
              static_cast<double>(all_bytes) / (1 << 20));
  std::printf("| stream | cache size (share of all) | LRU hits | segmented LRU hits |\n");
  std::printf("|---|---|---|---|\n");
  for (const bool scans : {false, true}) {
    const std::vector<long> requests = stream(sentences.size(), scans, 7);
    for (const double share : {0.02, 0.05, 0.10, 0.25}) {
      const auto bytes = static_cast<std::size_t>(share * static_cast<double>(all_bytes));
      std::printf("| %s | %.0f KiB (%.0f%%) | %.1f%% | %.1f%% |\n", scans ? "zipf+scans" : "zipf",
                  static_cast<double>(bytes) / 1024, share * 100,
                  100 * hit_ratio(sentences, requests, bytes, CachePolicy::kLru),
                  100 * hit_ratio(sentences, requests, bytes, CachePolicy::kSegmentedLru));
    }
  }
  return 0;
}
