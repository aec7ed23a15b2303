// Which KV-cache slot each decoder row uses, so that beam reordering copies only what forks.
//
// Row r of a step lives in slot `slot(r)`. Between steps, reorder() moves the rows to their new
// layout: the first row continuing a parent inherits the parent's slot (no copy), every further
// row continuing the same parent takes a free slot and a copy of the parent's cached prefix, a
// new sentence's row takes a free slot, and the slots of rows nobody continues are freed.
// Rows that merely move (a sentence before them finished) copy nothing, so a step copies
// what the beams fork, not the whole cache. Not thread-safe.
#pragma once

#include <vector>

namespace rpt {

class CacheSlots {
 public:
  struct Copy {
    int from_slot = 0;
    int to_slot = 0;
    int length = 0;  // cached positions to copy
  };

  // parents[r]: the old row new row r continues, or -1; lengths[r]: its cached positions.
  // Returns the copies to make before the next step. A copy's source is always a slot kept by
  // another row this step and never a destination, so the copies may run in any order.
  std::vector<Copy> reorder(const std::vector<int>& parents, const std::vector<int>& lengths);

  int rows() const { return static_cast<int>(row_slots_.size()); }
  int slot(int row) const { return row_slots_[static_cast<std::size_t>(row)]; }
  const std::vector<int>& row_slots() const { return row_slots_; }
  // Slots handed out so far: the cache must hold this many.
  int slot_count() const { return slot_count_; }

 private:
  int take_free_slot();

  std::vector<int> row_slots_;
  std::vector<int> free_slots_;
  int slot_count_ = 0;
};

}  // namespace rpt
