// TranslationCache on its own: keys separate every option that changes a result, the bound holds
// under either eviction policy (and the heap behind it), and a hit returns the whole stored
// result.
#include <malloc.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include "engine/glossary.h"
#include "server/translation_cache.h"

namespace rpt::server {
namespace {

// `prefix` followed by `i` (appended, not "literal" + std::string: GCC 12's -Wrestrict misfires
// on that at -O3).
std::string numbered(const char* prefix, int i) {
  std::string text(prefix);
  text += std::to_string(i);
  return text;
}

TranslationResult result_of(const std::string& text) {
  TranslationResult result;
  result.hypotheses.push_back({.text = text, .tokens = {"▁a", "b"}, .ids = {7, 8}, .score = -0.5f});
  result.source_tokens = 3;
  return result;
}

TEST(TranslationCacheTest, KeysDifferForEveryOptionThatChangesTheResult) {
  const DecodingOptions base;
  const std::string key = TranslationCache::key("Save", base, true);
  EXPECT_EQ(key, TranslationCache::key("Save", base, true));
  EXPECT_NE(key, TranslationCache::key("Save", base, false));
  EXPECT_NE(key, TranslationCache::key("Save ", base, true));
  // As many options as DecodingOptions::visit names: a field visited but not changed here fails.
  int fields = 0;
  base.visit([&fields](auto) { ++fields; });
  ASSERT_EQ(fields, 7);
  for (int option = 0; option < fields; ++option) {
    DecodingOptions changed = base;
    switch (option) {
      case 0:
        changed.beam_size = 2;
        break;
      case 1:
        changed.n_best = 2;
        break;
      case 2:
        changed.max_length = 20;
        break;
      case 3:
        changed.min_length = 1;
        break;
      case 4:
        changed.length_penalty = 0.6f;
        break;
      case 5:
        changed.length_penalty_type = LengthPenaltyType::kGnmt;
        break;
      default:
        changed.no_repeat_ngram_size = 3;
        break;
    }
    EXPECT_NE(key, TranslationCache::key("Save", changed, true)) << "option " << option;
  }
  // Glossaries: none, each glossary, each method, and the glossary's bytes never run into the
  // text's (identity "ab" + text "c" vs identity "a" + text "bc").
  const Glossary akte({{"file", "Akte"}}, 10);
  const Glossary datei({{"file", "Datei"}}, 10);
  const std::string with_akte = GlossaryUse{{&akte}, GlossaryMethod::kMask}.identity();
  EXPECT_EQ(key, TranslationCache::key("Save", base, true, ""));
  EXPECT_NE(key, TranslationCache::key("Save", base, true, with_akte));
  EXPECT_NE(TranslationCache::key("Save", base, true, with_akte),
            TranslationCache::key("Save", base, true, GlossaryUse{{&datei}}.identity()));
  EXPECT_NE(TranslationCache::key("Save", base, true, with_akte),
            TranslationCache::key("Save", base, true,
                                  GlossaryUse{{&akte}, GlossaryMethod::kPhrase}.identity()));
  EXPECT_NE(TranslationCache::key("c", base, true, "ab"),
            TranslationCache::key("bc", base, true, "a"));
  // The language pair's prefix: each pair of a multilingual model keys its own translations, and
  // the prefix's bytes never run into the glossary's or the text's.
  EXPECT_EQ(key, TranslationCache::key("Save", base, true, "", ""));
  EXPECT_NE(key, TranslationCache::key("Save", base, true, "", "<2de> "));
  EXPECT_NE(TranslationCache::key("Save", base, true, "", "<2de> "),
            TranslationCache::key("Save", base, true, "", "<2fr> "));
  EXPECT_NE(TranslationCache::key("c", base, true, "", "ab"),
            TranslationCache::key("bc", base, true, "", "a"));
  EXPECT_NE(TranslationCache::key("Save", base, true, "ab", ""),
            TranslationCache::key("Save", base, true, "a", "b"));
}

TEST(TranslationCacheTest, AHitIsTheWholeStoredResult) {
  TranslationCache cache({.max_bytes = 1 << 20}, {});
  const std::string key = TranslationCache::key("Save", {}, true);
  EXPECT_FALSE(cache.find(key).has_value());
  cache.insert(key, result_of("Speichern"));
  const auto hit = cache.find(key);
  ASSERT_TRUE(hit.has_value());
  ASSERT_EQ(hit->hypotheses.size(), 1u);
  EXPECT_EQ(hit->hypotheses[0].text, "Speichern");
  EXPECT_EQ(hit->hypotheses[0].tokens, (std::vector<std::string>{"▁a", "b"}));
  EXPECT_EQ(hit->hypotheses[0].ids, (std::vector<int>{7, 8}));
  EXPECT_EQ(hit->hypotheses[0].score, -0.5f);
  EXPECT_EQ(hit->source_tokens, 3);
  EXPECT_EQ(cache.entries(), 1u);
}

TEST(TranslationCacheTest, TheBoundHoldsAndTheLeastRecentlyUsedGoFirst) {
  // One shard, room for a few entries: evictions in use order.
  TranslationCache cache({.max_bytes = 2048, .shards = 1, .policy = CachePolicy::kLru}, {});
  const auto key = [](int i) { return TranslationCache::key(numbered("text ", i), {}, true); };
  for (int i = 0; i < 3; ++i) cache.insert(key(i), result_of(numbered("t", i)));
  ASSERT_EQ(cache.entries(), 3u) << "three entries fit in 2 KiB";
  ASSERT_TRUE(cache.find(key(0)).has_value());  // 0 is now the most recent; 1 the least
  for (int i = 3; i < 40; ++i) {
    cache.insert(key(i), result_of(numbered("t", i)));
    EXPECT_LE(cache.bytes(), 2048u);
  }
  EXPECT_FALSE(cache.find(key(1)).has_value());
  EXPECT_TRUE(cache.find(key(39)).has_value());
  EXPECT_LT(cache.entries(), 40u);
}

// Segmented LRU: sentences hit since they entered survive a run of one-off sentences that
// plain LRU lets push them out; the protected segment stays within its share and the whole
// within the bound.
TEST(TranslationCacheTest, SegmentedLruKeepsHitEntriesThroughAScan) {
  const auto key = [](int i) { return TranslationCache::key(numbered("text ", i), {}, true); };
  for (const CachePolicy policy : {CachePolicy::kSegmentedLru, CachePolicy::kLru}) {
    TranslationCache cache({.max_bytes = 8192, .shards = 1, .policy = policy}, {});
    for (int i = 0; i < 4; ++i) cache.insert(key(i), result_of(numbered("t", i)));
    for (int i = 0; i < 4; ++i) ASSERT_TRUE(cache.find(key(i)).has_value());  // hit once
    for (int i = 100; i < 200; ++i) {  // the scan: one-offs, never asked for again
      cache.insert(key(i), result_of(numbered("t", i)));
      ASSERT_LE(cache.bytes(), 8192u);
    }
    int kept = 0;
    for (int i = 0; i < 4; ++i) kept += cache.find(key(i)).has_value() ? 1 : 0;
    if (policy == CachePolicy::kSegmentedLru) {
      EXPECT_EQ(kept, 4) << "segmented LRU keeps what was hit";
      EXPECT_TRUE(cache.find(key(199)).has_value()) << "and still admits new entries";
    } else {
      EXPECT_EQ(kept, 0) << "plain LRU loses them to the scan";
    }
  }
  // Every entry hit: the protected segment holds at most 80% of the bytes, the rest wait in
  // probation, the bound holds.
  TranslationCache cache({.max_bytes = 8192, .shards = 1}, {});
  for (int i = 0; i < 60; ++i) {
    cache.insert(key(i), result_of(numbered("t", i)));
    cache.find(key(i));
    ASSERT_LE(cache.bytes(), 8192u);
  }
  EXPECT_TRUE(cache.find(key(59)).has_value());
  EXPECT_GT(cache.entries(), 1u);
}

#if defined(__SANITIZE_ADDRESS__)
#define RPT_MALLOC_COUNTS_HEAP 0  // AddressSanitizer's allocator: mallinfo2 says nothing
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RPT_MALLOC_COUNTS_HEAP 0
#else
#define RPT_MALLOC_COUNTS_HEAP 1
#endif
#else
#define RPT_MALLOC_COUNTS_HEAP 1
#endif

// The bound is on an estimate of each entry's heap use; the heap itself (glibc's bytes in use)
// follows it through a stream of unique entries worth 30 times the bound, and is given back.
TEST(TranslationCacheTest, HeapInUseStaysWithinTheBoundUnderUniqueEntries) {
  if (!RPT_MALLOC_COUNTS_HEAP) GTEST_SKIP() << "the sanitizer's allocator: no heap count";
  const auto in_use = [] {
    const struct mallinfo2 info = mallinfo2();
    return static_cast<long>(info.uordblks + info.hblkhd);
  };
  constexpr std::size_t kBound = 1 << 20;
  // An 8-best list with tokens, as a large server entry (~3 KB).
  const auto entry = [](int i) {
    TranslationResult result;
    for (int h = 0; h < 8; ++h) {
      TranslationHypothesis hypothesis;
      hypothesis.text = numbered("Élément enregistré dans le dossier ", i);
      for (int t = 0; t < 12; ++t) {
        hypothesis.tokens.push_back(numbered("▁piece", t));
        hypothesis.ids.push_back(t);
      }
      result.hypotheses.push_back(std::move(hypothesis));
    }
    return result;
  };
  const long before = in_use();
  long most = 0;
  {
    TranslationCache cache({.max_bytes = kBound}, {});
    for (int i = 0; i < 10000; ++i) {
      cache.insert(TranslationCache::key(numbered("Item saved to folder ", i), {}, true), entry(i));
      if (i % 500 == 499) {
        most = std::max(most, in_use() - before);
        ASSERT_LE(cache.bytes(), kBound);
      }
    }
    ASSERT_GT(cache.entries(), 0u);
    EXPECT_LT(cache.entries(), 10000u / 20) << "most entries were evicted";
    // The estimate is not far below the heap it stands for.
    const long held = in_use() - before;
    std::printf("cache heap %ld B for an estimate of %zu B (%zu entries)\n", held, cache.bytes(),
                cache.entries());
    EXPECT_LE(static_cast<double>(held), 1.25 * static_cast<double>(cache.bytes()))
        << "heap " << held << " B for an estimate of " << cache.bytes() << " B";
  }
  EXPECT_LE(static_cast<double>(most), 1.25 * kBound) << "heap in use past the bound";
  EXPECT_LE(in_use() - before, 64 << 10) << "the cache gave its heap back";
}

TEST(TranslationCacheTest, AnEntryLargerThanItsShardIsNotStored) {
  TranslationCache cache({.max_bytes = 256, .shards = 1}, {});
  const std::string key = TranslationCache::key(std::string(1000, 'x'), {}, true);
  cache.insert(key, result_of("y"));
  EXPECT_FALSE(cache.find(key).has_value());
  EXPECT_EQ(cache.bytes(), 0u);
}

}  // namespace
}  // namespace rpt::server
