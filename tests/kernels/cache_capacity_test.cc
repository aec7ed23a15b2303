// kernels::grown_cache_capacity: how the GPU's KV cache grows as its sentences get longer.
#include <gtest/gtest.h>

#include "kernels/kv_cache.h"

namespace rpt::kernels {
namespace {

TEST(CacheCapacity, GrowsByHalfInMultiplesOfSixteen) {
  EXPECT_EQ(grown_cache_capacity(0, 1, 2048), 16);
  EXPECT_EQ(grown_cache_capacity(16, 17, 2048), 32);
  EXPECT_EQ(grown_cache_capacity(32, 33, 2048), 48);
  EXPECT_EQ(grown_cache_capacity(48, 49, 2048), 80);
  EXPECT_EQ(grown_cache_capacity(80, 81, 2048), 128);
  EXPECT_EQ(grown_cache_capacity(128, 129, 2048), 192);
}

TEST(CacheCapacity, HoldsWhatTheStepNeedsWhenThatIsMore) {
  EXPECT_EQ(grown_cache_capacity(16, 100, 2048), 112) << "a step past the growth rounds up";
  EXPECT_EQ(grown_cache_capacity(0, 64, 2048), 64);
}

TEST(CacheCapacity, StopsAtTheSearchLimit) {
  // 64 tokens a sentence: 16, 32, 48, then 64 positions, not 80.
  EXPECT_EQ(grown_cache_capacity(48, 49, 64), 64);
  EXPECT_EQ(grown_cache_capacity(0, 1, 5), 5);
  EXPECT_EQ(grown_cache_capacity(192, 193, 250), 250);
  // A limit below what a step needs (it came from stale options) never truncates the cache.
  EXPECT_EQ(grown_cache_capacity(16, 40, 30), 40);
}

}  // namespace
}  // namespace rpt::kernels
