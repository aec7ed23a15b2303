#include "engine/cache_slots.h"

#include "kernels/errors.h"

namespace rpt {

int CacheSlots::take_free_slot() {
  if (free_slots_.empty()) return slot_count_++;
  const int slot = free_slots_.back();
  free_slots_.pop_back();
  return slot;
}

std::vector<CacheSlots::Copy> CacheSlots::reorder(const std::vector<int>& parents,
                                                  const std::vector<int>& lengths) {
  RPT_CHECK(parents.size() == lengths.size(), InvalidArgument, "reorder with ", parents.size(),
            " parents and ", lengths.size(), " lengths");
  const int old_rows = rows();
  std::vector<bool> claimed(static_cast<std::size_t>(old_rows), false);
  std::vector<int> new_slots(parents.size(), -1);
  // First children inherit their parent's slot.
  for (std::size_t r = 0; r < parents.size(); ++r) {
    const int parent = parents[r];
    if (parent < 0) continue;
    RPT_CHECK(parent < old_rows, InvalidArgument, "reorder parent ", parent, " out of ",
              old_rows);
    if (!claimed[static_cast<std::size_t>(parent)]) {
      claimed[static_cast<std::size_t>(parent)] = true;
      new_slots[r] = slot(parent);
    }
  }
  // Slots nobody continues are free for this step's forks and arrivals.
  for (int row = 0; row < old_rows; ++row) {
    if (!claimed[static_cast<std::size_t>(row)]) free_slots_.push_back(slot(row));
  }
  std::vector<Copy> copies;
  for (std::size_t r = 0; r < parents.size(); ++r) {
    if (new_slots[r] >= 0) continue;
    new_slots[r] = take_free_slot();
    if (parents[r] >= 0 && lengths[r] > 0) {
      copies.push_back({.from_slot = slot(parents[r]), .to_slot = new_slots[r],
                        .length = lengths[r]});
    }
  }
  row_slots_ = std::move(new_slots);
  return copies;
}

}  // namespace rpt
