// Cache slots: first children inherit their parent's slot, forks copy, moves copy nothing,
// freed slots are reused, and no copy reads a slot another copy writes.
#include "engine/cache_slots.h"

#include <gtest/gtest.h>

#include <set>

namespace rpt {
namespace {

TEST(CacheSlots, ForksCopyMovesDoNotAndSlotsAreReused) {
  CacheSlots slots;
  EXPECT_TRUE(slots.reorder({-1, -1}, {0, 0}).empty());  // two new sentences
  EXPECT_EQ(slots.row_slots(), (std::vector<int>{0, 1}));

  // Beam fork: rows 0 and 1 continue old row 0, row 2 continues old row 1.
  auto copies = slots.reorder({0, 0, 1}, {1, 1, 1});
  EXPECT_EQ(slots.row_slots(), (std::vector<int>{0, 2, 1}));
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0].from_slot, 0);
  EXPECT_EQ(copies[0].to_slot, 2);
  EXPECT_EQ(copies[0].length, 1);
  EXPECT_EQ(slots.slot_count(), 3);

  // The first sentence finished: the rows move up without a copy; slot 0 is freed.
  copies = slots.reorder({2, 1}, {2, 2});
  EXPECT_TRUE(copies.empty());
  EXPECT_EQ(slots.row_slots(), (std::vector<int>{1, 2}));

  // A fork into the freed slot and a new sentence into the slot nobody continued.
  copies = slots.reorder({0, 0, -1}, {3, 3, 0});
  EXPECT_EQ(slots.slot_count(), 3) << "freed slots are reused before new ones are made";
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0].from_slot, 1);
  EXPECT_EQ(copies[0].length, 3);
  const std::set<int> distinct(slots.row_slots().begin(), slots.row_slots().end());
  EXPECT_EQ(distinct.size(), 3u) << "every row has its own slot";
  EXPECT_EQ(slots.slot(0), 1) << "the first child keeps its parent's slot";
  EXPECT_EQ(slots.slot(1), copies[0].to_slot);
}

TEST(CacheSlots, CopySourcesAreNeverDestinations) {
  CacheSlots slots;
  slots.reorder(std::vector<int>(8, -1), std::vector<int>(8, 0));
  // Every parent forks into many children, some parents are dropped.
  const auto copies = slots.reorder({3, 3, 3, 5, 5, 0, 7, 7}, {4, 4, 4, 4, 4, 4, 4, 4});
  std::set<int> sources, destinations;
  for (const auto& copy : copies) {
    sources.insert(copy.from_slot);
    destinations.insert(copy.to_slot);
  }
  for (int slot : sources) EXPECT_EQ(destinations.count(slot), 0u) << "slot " << slot;
  EXPECT_EQ(copies.size(), 4u);  // 3 forks of 3, 1 of 5, 1 of 7 -> 2 + 1 + 1
  EXPECT_EQ(slots.slot_count(), 8);
}

TEST(CacheSlots, RefusesAParentThatDoesNotExist) {
  CacheSlots slots;
  slots.reorder({-1}, {0});
  EXPECT_ANY_THROW(slots.reorder({1}, {1}));
}

}  // namespace
}  // namespace rpt
