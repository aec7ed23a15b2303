// TranslationCache on its own: keys separate every option that changes a result, the bound holds
// with least recently used entries out first, and a hit returns the whole stored result.
#include <string>

#include <gtest/gtest.h>

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
  for (int option = 0; option < 6; ++option) {
    DecodingOptions changed = base;
    switch (option) {
      case 0: changed.beam_size = 2; break;
      case 1: changed.n_best = 2; break;
      case 2: changed.max_length = 20; break;
      case 3: changed.min_length = 1; break;
      case 4: changed.length_penalty = 0.6f; break;
      default: changed.length_penalty_type = LengthPenaltyType::kGnmt; break;
    }
    EXPECT_NE(key, TranslationCache::key("Save", changed, true)) << "option " << option;
  }
}

TEST(TranslationCacheTest, AHitIsTheWholeStoredResult) {
  TranslationCache cache(1 << 20, {});
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
  TranslationCache cache(2048, {}, 1);
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

TEST(TranslationCacheTest, AnEntryLargerThanItsShardIsNotStored) {
  TranslationCache cache(256, {}, 1);
  const std::string key = TranslationCache::key(std::string(1000, 'x'), {}, true);
  cache.insert(key, result_of("y"));
  EXPECT_FALSE(cache.find(key).has_value());
  EXPECT_EQ(cache.bytes(), 0u);
}

}  // namespace
}  // namespace rpt::server
