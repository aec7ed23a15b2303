// kernels::MemoryBudget and MemoryCharge: limits, parents, release on destruction.
#include "kernels/memory_budget.h"

#include <gtest/gtest.h>

#include "kernels/errors.h"

namespace rpt::kernels {
namespace {

TEST(MemoryBudget, RefusesPastTheLimitAndKeepsWhatWasCharged) {
  MemoryBudget budget(100);
  MemoryCharge charge(&budget, 60);
  EXPECT_EQ(budget.used_bytes(), 60u);
  EXPECT_THROW(charge.grow_to(101), ResourceExhausted);
  EXPECT_EQ(charge.bytes(), 60u) << "a refused growth keeps the old charge";
  EXPECT_EQ(budget.used_bytes(), 60u);
  charge.grow_to(100);
  charge.grow_to(40);  // never shrinks
  EXPECT_EQ(charge.bytes(), 100u);
  EXPECT_EQ(budget.peak_bytes(), 100u);
}

TEST(MemoryBudget, ChargesReleaseWhenDestroyedOrMoved) {
  MemoryBudget budget;  // no limit
  {
    MemoryCharge first(&budget, 10);
    MemoryCharge second(std::move(first));
    EXPECT_EQ(budget.used_bytes(), 10u);
    MemoryCharge third(&budget, 5);
    third = std::move(second);  // releases third's own 5
    EXPECT_EQ(budget.used_bytes(), 10u);
  }
  EXPECT_EQ(budget.used_bytes(), 0u);
  EXPECT_EQ(budget.peak_bytes(), 15u);
  MemoryCharge unbudgeted(nullptr, 1u << 30);  // charges nothing anywhere
  EXPECT_EQ(unbudgeted.bytes(), 1u << 30);
}

TEST(MemoryBudget, ChildChargesItsParentAndEitherLimitRefuses) {
  MemoryBudget engine(100);
  MemoryBudget first(0, &engine);
  MemoryBudget second(30, &engine);
  MemoryCharge a(&first, 60);
  EXPECT_EQ(engine.used_bytes(), 60u);
  EXPECT_THROW(MemoryCharge(&second, 31), ResourceExhausted) << "the child's own limit";
  EXPECT_EQ(engine.used_bytes(), 60u) << "a refusal by the child undoes the parent's charge";
  MemoryCharge b(&second, 30);
  EXPECT_THROW(MemoryCharge(&first, 11), ResourceExhausted) << "the parent's limit";
  EXPECT_EQ(first.used_bytes(), 60u);
  EXPECT_EQ(engine.used_bytes(), 90u);
}

}  // namespace
}  // namespace rpt::kernels
