// The fair admission policy (server/fair_queue.h) on its own: the pick across tenants by weighted
// start-time fair queueing, retries ahead of everything, purges, and the admission rule's shares.
#include "server/fair_queue.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace rpt::server {
namespace {

constexpr long kCost = 100;  // of a typical sentence

// Items are "tenant:number" labels.
class FairQueueTest : public ::testing::Test {
 protected:
  void push(const std::string& tenant, int count, int weight = 1, long cost = kCost) {
    for (int i = 0; i < count; ++i) {
      queue_.push_back(tenant, weight, tenant + ":" + std::to_string(next_[tenant]++), 1, cost);
    }
  }
  // The first letters of the tenants of the next `count` items popped.
  std::string pop_tenants(int count) {
    std::string order;
    for (int i = 0; i < count && !queue_.empty(); ++i) order += queue_.pop_front().front();
    return order;
  }

  FairQueue<std::string> queue_;
  std::map<std::string, int> next_;
};

TEST_F(FairQueueTest, OneTenantIsFirstComeFirstServed) {
  queue_.push_back("", 1, "a", 3, 12);
  queue_.push_back("", 1, "b", 500, 2000);  // far costlier: it still comes next
  queue_.push_back("", 1, "c", 4, 16);
  EXPECT_EQ(queue_.size(), 3);
  EXPECT_EQ(queue_.tokens(), 507);
  EXPECT_EQ(queue_.pop_front(), "a");
  EXPECT_EQ(queue_.pop_front(), "b");
  EXPECT_EQ(queue_.pop_front(), "c");
  EXPECT_TRUE(queue_.empty());
  EXPECT_EQ(queue_.tokens(), 0);
}

TEST_F(FairQueueTest, EqualPrioritiesAlternate) {
  push("a", 6);
  push("b", 3);
  EXPECT_EQ(pop_tenants(9), "abababaaa");
}

TEST_F(FairQueueTest, PrioritiesShareTheTurns) {
  push("a", 30, 2);
  push("b", 30, 1);
  const std::string order = pop_tenants(30);
  EXPECT_EQ(std::count(order.begin(), order.end(), 'a'), 20) << order;
  EXPECT_EQ(order.substr(0, 6), "abaaba");
}

TEST_F(FairQueueTest, TurnsShareTheDecodersWorkNotTheSentenceCount) {
  push("long", 20, 1, 2 * kCost);  // sentences twice as long (or twice the beams)
  push("short", 40, 1, kCost / 2);
  const std::string order = pop_tenants(30);
  // One long sentence for four short ones: the same work.
  EXPECT_EQ(order.substr(0, 8), "lsssslss");
  EXPECT_EQ(std::count(order.begin(), order.end(), 'l') * 4,
            std::count(order.begin(), order.end(), 's'))
      << order;
}

TEST_F(FairQueueTest, AFloodingTenantDoesNotDelayALightOne) {
  push("flood", 1000);
  EXPECT_EQ(pop_tenants(10), std::string(10, 'f'));
  push("light", 1);
  // It starts at the virtual time, before the flooder's next sentence: next, every time.
  EXPECT_EQ(pop_tenants(2), "lf");
  push("light", 1);
  EXPECT_EQ(pop_tenants(2), "lf");
  EXPECT_EQ(queue_.load("flood").sentences, 1000 - 12);
}

TEST_F(FairQueueTest, FrontIsStableUntilPopped) {
  push("a", 2);
  push("b", 2);
  const std::string first = queue_.front();
  EXPECT_EQ(queue_.front(), first);
  EXPECT_EQ(queue_.pop_front(), first);
  const std::string second = queue_.front();
  EXPECT_EQ(queue_.front(), second);
  EXPECT_EQ(queue_.pop_front(), second);
  EXPECT_NE(first.substr(0, 1), second.substr(0, 1));
}

TEST_F(FairQueueTest, EmptyTenantsAreSkippedAndEarnNoCredit) {
  push("a", 1);
  push("b", 5);
  push("c", 1);
  EXPECT_EQ(pop_tenants(3), "abc");
  // a and c hold nothing: b alone takes every pick.
  EXPECT_EQ(pop_tenants(2), "bb");
  // Back after idling, a starts at the virtual time, no credit banked: the two alternate.
  push("a", 4);
  EXPECT_EQ(pop_tenants(4), "abab");
  EXPECT_EQ(queue_.load("c").sentences, 0);
}

TEST_F(FairQueueTest, ATenantThatEmptiesAndRefillsGetsNoMoreThanItsShare) {
  push("b", 6);
  push("a", 1);
  EXPECT_EQ(pop_tenants(2), "ba");
  // a's sentence is still "decoding" in virtual time: a refill waits for b's next.
  push("a", 1);
  EXPECT_EQ(pop_tenants(2), "ba");
  push("a", 1);
  EXPECT_EQ(pop_tenants(2), "ba");
}

TEST_F(FairQueueTest, RetriesGoAheadOfEveryTenantInTheirOrder) {
  push("a", 3);
  push("b", 3);
  EXPECT_EQ(queue_.pop_front(), "a:0");
  EXPECT_EQ(queue_.pop_front(), "b:0");
  // A failed group of two, put back last first (as the scheduler does).
  queue_.push_front("b", 1, "b:retry", 1, kCost);
  queue_.push_front("a", 1, "a:retry", 1, kCost);
  EXPECT_EQ(queue_.load("a").sentences, 3);
  EXPECT_EQ(queue_.pop_front(), "a:retry");
  EXPECT_EQ(queue_.pop_front(), "b:retry");
  EXPECT_EQ(pop_tenants(4), "abab");
  // A retry of a tenant with nothing else queued keeps the tenant until it is popped.
  queue_.push_front("c", 3, "c:retry", 1, kCost);
  EXPECT_EQ(queue_.admission("d", 1, {1, 1}, {10, 100}).queued_weight, 4);
  EXPECT_EQ(queue_.pop_front(), "c:retry");
  EXPECT_TRUE(queue_.empty());
  EXPECT_EQ(queue_.admission("d", 1, {1, 1}, {10, 100}).queued_weight, 1);
}

TEST_F(FairQueueTest, RemovedItemsLeaveTheirTenantsAndTheCounts) {
  push("a", 3);
  push("b", 3);
  queue_.push_front("a", 1, "a:retry", 1, kCost);
  EXPECT_EQ(queue_.front(), "a:retry");
  std::vector<std::string> removed;
  queue_.remove_if([&](std::string& item) {
    if (item.rfind("a:", 0) != 0) return false;
    removed.push_back(std::move(item));
    return true;
  });
  EXPECT_EQ(removed, (std::vector<std::string>{"a:retry", "a:0", "a:1", "a:2"}));
  EXPECT_EQ(queue_.size(), 3);
  EXPECT_EQ(queue_.tokens(), 3);
  EXPECT_EQ(queue_.load("a").sentences, 0);
  EXPECT_EQ(pop_tenants(3), "bbb");
  push("c", 2);
  queue_.remove_if([](std::string&) { return true; });
  EXPECT_TRUE(queue_.empty());
  push("d", 1);
  EXPECT_EQ(queue_.pop_front(), "d:0");
}

TEST_F(FairQueueTest, PrioritiesFollowTheLatestCall) {
  push("a", 30, 1);
  push("b", 30, 1);
  EXPECT_EQ(pop_tenants(4), "abab");
  push("b", 1, 3);  // the keys were reloaded: b's priority is now 3
  const std::string order = pop_tenants(8);
  EXPECT_EQ(std::count(order.begin(), order.end(), 'b'), 6) << order;
}

// The admission rule.

constexpr QueueLoad kBounds{.sentences = 100, .tokens = 1000};

// The verdict on `call` by a tenant of priority `weight` that holds `held`, the queue `total`.
QueueAdmission judge(QueueLoad call, QueueLoad held, QueueLoad total, int weight,
                     int other_weight) {
  return judge_admission({.bounds = kBounds,
                          .call = call,
                          .held = held,
                          .total = total,
                          .weight = weight,
                          .other_weight = other_weight});
}

TEST(QueueAdmissionTest, AloneATenantHasTheWholeBoundsAsOneQueue) {
  EXPECT_TRUE(judge({10, 100}, {90, 900}, {90, 900}, 1, 0).admitted());
  const QueueAdmission full = judge({10, 100}, {91, 100}, {91, 100}, 1, 0);
  EXPECT_EQ(full.verdict, QueueVerdict::kFull);
  EXPECT_EQ(full.share.sentences, 100);
  EXPECT_EQ(judge({1, 10}, {50, 991}, {50, 991}, 7, 0).verdict,
            QueueVerdict::kFull);  // the token bound
}

TEST(QueueAdmissionTest, AFloodingTenantIsRefusedPastItsShareWhileOthersWait) {
  // The flooder filled the queue alone; a light tenant of the same priority queued one sentence.
  const QueueLoad total{101, 1010};
  const QueueAdmission flood = judge({1, 10}, {100, 1000}, total, 1, 1);
  EXPECT_EQ(flood.verdict, QueueVerdict::kOverShare);
  EXPECT_EQ(flood.share.sentences, 50);
  EXPECT_EQ(flood.queued_weight, 2);
  // The light tenant is admitted up to its half, past the bounds.
  EXPECT_TRUE(judge({49, 490}, {1, 10}, total, 1, 1).admitted());
  EXPECT_EQ(judge({50, 500}, {1, 10}, total, 1, 1).verdict, QueueVerdict::kOverShare);
  // Once the flooder's queue is down to its share, it is admitted again.
  EXPECT_TRUE(judge({1, 10}, {49, 490}, {60, 600}, 1, 1).admitted());
}

TEST(QueueAdmissionTest, SharesFollowPriorities) {
  // Priority 2 against 1: two thirds, rounded down; the other gets one third.
  EXPECT_EQ(judge({1, 1}, {}, {}, 2, 1).share.sentences, 66);
  EXPECT_EQ(judge({1, 1}, {}, {}, 1, 2).share.sentences, 33);
  EXPECT_TRUE(judge({66, 660}, {}, {30, 300}, 2, 1).admitted());
  EXPECT_FALSE(judge({34, 340}, {}, {60, 600}, 1, 2).admitted());
}

TEST(QueueAdmissionTest, TheQueueStopsAtTwiceItsBounds) {
  // Three tenants each arrived to a fuller queue: within its share, but the ceiling holds.
  EXPECT_TRUE(judge({10, 10}, {}, {190, 190}, 1, 2).admitted());
  EXPECT_EQ(judge({11, 11}, {}, {190, 190}, 1, 2).verdict, QueueVerdict::kFull);
  EXPECT_EQ(judge({1, 30}, {}, {10, 1980}, 1, 2).verdict, QueueVerdict::kFull);
}

TEST_F(FairQueueTest, AdmissionSeesTheQueuedTenants) {
  push("flood", 100);
  const QueueLoad bounds{100, 1000};
  EXPECT_EQ(queue_.admission("flood", 1, {1, 1}, bounds).verdict, QueueVerdict::kFull);
  EXPECT_TRUE(queue_.admission("light", 1, {1, 1}, bounds).admitted());
  push("light", 1);
  EXPECT_EQ(queue_.admission("flood", 1, {1, 1}, bounds).verdict, QueueVerdict::kOverShare);
  EXPECT_TRUE(queue_.admission("light", 1, {49, 1}, bounds).admitted());
  EXPECT_FALSE(queue_.admission("light", 1, {50, 1}, bounds).admitted());
  // A third tenant of priority 2: half of the bounds while the other two wait.
  EXPECT_EQ(queue_.admission("big", 2, {1, 1}, bounds).share.sentences, 50);
}

}  // namespace
}  // namespace rpt::server
