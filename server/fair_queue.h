// Fair admission across tenants (docs/server.md "Fair sharing under load"). Each model's
// Scheduler queues its sentences here, one queue per tenant: the call's --api-keys tenant, or
// without keys one anonymous tenant for every call, whose queue is first come, first served.
//
// The next sentence to admit into the decoder is picked across tenants by start-time fair
// queueing (Goyal, Vin and Cheng, SIGCOMM 1996), weighted by the tenants' priorities:
//
// - Each tenant's next sentence starts, in virtual time, when the tenant's previous one finished,
//   or at the queue's virtual time if that is later: a tenant that was idle starts now, with no
//   credit banked. It finishes its cost (source tokens x beam: the decoder's work) over the
//   tenant's priority later. The sentence that starts first is admitted, and the queue's virtual
//   time moves to its start. So tenants share admissions in proportion to their priorities, by
//   work, sentence by sentence; and a tenant that arrives is next, or after the sentences already
//   tied with it: a flooding tenant's backlog, however long, is no queue ahead of it.
// - Retries (sentences put back after a failed encoding or decoder step) go ahead of every
//   tenant's fresh sentences, the latest failed group first in its admission order: they have had
//   their turn, and the scheduler's bisection towards a failing sentence needs them next.
//
// What a tenant may queue (judge_admission): its share of the bounds is its priority over the
// priorities of the tenants with sentences queued, its own included, so the whole bounds when it
// is alone (exactly the single queue's rule). A call that keeps its tenant within its share is
// admitted even when the queue is past the bounds, lest a tenant that filled an idle queue lock
// the others out; the queue as a whole stops at twice the bounds. A call that takes its tenant
// past its share is refused while other tenants have sentences queued: a flooding tenant is
// refused, not the others.
//
// Thread safety: none; the scheduler's mutex guards it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>

namespace rpt::server {

// What a call, a tenant's queue or the whole queue holds; also the queue's bounds.
struct QueueLoad {
  long sentences = 0;
  long tokens = 0;  // source tokens
};

enum class QueueVerdict {
  kAdmitted,
  kOverShare,  // past its tenant's share while other tenants have sentences queued
  kFull,       // past the bounds, the tenant alone; or the queue past twice the bounds
};

struct QueueAdmission {
  QueueVerdict verdict = QueueVerdict::kAdmitted;
  QueueLoad share;        // what the tenant may hold now
  int queued_weight = 0;  // priorities of the tenants with sentences queued, the caller's included

  bool admitted() const { return verdict == QueueVerdict::kAdmitted; }
};

// A call at the door of the queue.
struct AdmissionInput {
  QueueLoad bounds;      // the queue's
  QueueLoad call;        // within the bounds (a larger call is INVALID_ARGUMENT, refused first)
  QueueLoad held;        // what the caller's tenant holds
  QueueLoad total;       // what the queue holds
  int weight = 1;        // the caller's tenant's priority
  int other_weight = 0;  // priorities of the other tenants with sentences queued
};

// The admission rule (see above).
QueueAdmission judge_admission(const AdmissionInput& input);

// Per-tenant queues of `Item`s (the scheduler's queued sentences) and the pick across them.
template <typename Item>
class FairQueue {
 public:
  bool empty() const { return total_.sentences == 0; }
  long size() const { return total_.sentences; }
  long tokens() const { return total_.tokens; }
  // What `tenant` holds (fresh sentences and retries).
  QueueLoad load(std::string_view tenant) const {
    const auto found = tenants_.find(tenant);
    return found == tenants_.end() ? QueueLoad{} : found->second.load;
  }

  // judge_admission for a call of `call` by `tenant` of priority `weight`.
  QueueAdmission admission(std::string_view tenant, int weight, const QueueLoad& call,
                           const QueueLoad& bounds) const {
    const auto found = tenants_.find(tenant);
    const bool queued = found != tenants_.end() && found->second.load.sentences > 0;
    return judge_admission({.bounds = bounds,
                            .call = call,
                            .held = queued ? found->second.load : QueueLoad{},
                            .total = total_,
                            .weight = std::max(1, weight),
                            .other_weight = queued_weight_ - (queued ? found->second.weight : 0)});
  }

  // Queues `item` of `tokens` source tokens and decoding cost `cost` at the back of `tenant`'s
  // queue. `weight` (the tenant's priority) replaces the tenant's: the keys may have been reloaded.
  void push_back(const std::string& tenant, int weight, Item item, long tokens, long cost) {
    const auto at = enter(tenant, weight);
    at->second.fresh.push_back({std::move(item), tokens, cost, next_order_++, at});
    add(at->second, tokens);
  }

  // Queues a retry ahead of every fresh sentence and every retry queued before it.
  void push_front(const std::string& tenant, int weight, Item item, long tokens, long cost) {
    const auto at = enter(tenant, weight);
    retries_.push_front({std::move(item), tokens, cost, next_order_++, at});
    add(at->second, tokens);
  }

  // The next item by the policy; the queue must not be empty.
  const Item& front() const {
    if (!retries_.empty()) return retries_.front().item;
    return next_tenant()->second.fresh.front().item;
  }

  // Removes front() and returns it.
  Item pop_front() {
    std::deque<Entry>* from = &retries_;
    if (retries_.empty()) {  // a fresh sentence: it moves the virtual time
      Tenant& tenant = tenants_.find(next_tenant()->first)->second;
      virtual_time_ = start(tenant);
      tenant.finish =
          virtual_time_ + static_cast<double>(tenant.fresh.front().cost) / tenant.weight;
      from = &tenant.fresh;
    }
    Entry entry = std::move(from->front());
    from->pop_front();
    subtract(entry.tenant->second, entry.tokens);
    forget_idle();
    return std::move(entry.item);
  }

  // Removes every item for which `remove(Item&)` returns true; `remove` may move what it needs
  // out of an item it removes. Allocates nothing.
  template <typename Remove>
  void remove_if(Remove remove) {
    const auto drop = [&](std::deque<Entry>& entries) {
      auto kept = entries.begin();
      for (auto it = entries.begin(); it != entries.end(); ++it) {
        if (remove(it->item)) {
          subtract(it->tenant->second, it->tokens);
          continue;
        }
        if (kept != it) *kept = std::move(*it);
        ++kept;
      }
      entries.erase(kept, entries.end());
    };
    drop(retries_);
    for (auto& [name, tenant] : tenants_) drop(tenant.fresh);
    forget_idle();
  }

 private:
  struct Tenant;
  using Tenants = std::map<std::string, Tenant, std::less<>>;
  struct Entry {
    Item item;
    long tokens = 0;
    long cost = 0;
    std::uint64_t order = 0;  // of arrival, among all tenants
    typename Tenants::iterator tenant;
  };
  // A tenant with sentences queued, or whose last sentence finishes after the virtual time (were
  // it forgotten, its next sentence would start early).
  struct Tenant {
    int weight = 0;
    double finish = 0;        // virtual time its last admitted sentence finishes
    QueueLoad load;           // fresh sentences and retries
    std::deque<Entry> fresh;  // in arrival order
  };

  double start(const Tenant& tenant) const { return std::max(virtual_time_, tenant.finish); }
  // The tenant whose next fresh sentence starts first (of equals, the one queued first); there
  // must be one. Tenants are few (the keys file's): a scan.
  typename Tenants::const_iterator next_tenant() const {
    auto next = tenants_.end();
    for (auto it = tenants_.begin(); it != tenants_.end(); ++it) {
      if (it->second.fresh.empty()) continue;
      if (next == tenants_.end()) {
        next = it;
        continue;
      }
      const double a = start(it->second), b = start(next->second);
      if (a < b || (a == b && it->second.fresh.front().order < next->second.fresh.front().order)) {
        next = it;
      }
    }
    return next;
  }

  typename Tenants::iterator enter(const std::string& tenant, int weight) {
    const auto at = tenants_.try_emplace(tenant).first;
    weight = std::max(1, weight);
    if (at->second.load.sentences > 0) queued_weight_ += weight - at->second.weight;
    at->second.weight = weight;
    return at;
  }
  void add(Tenant& tenant, long tokens) {
    if (tenant.load.sentences == 0) queued_weight_ += tenant.weight;
    tenant.load.sentences += 1;
    tenant.load.tokens += tokens;
    total_.sentences += 1;
    total_.tokens += tokens;
  }
  void subtract(Tenant& tenant, long tokens) {
    tenant.load.sentences -= 1;
    tenant.load.tokens -= tokens;
    total_.sentences -= 1;
    total_.tokens -= tokens;
    if (tenant.load.sentences == 0) queued_weight_ -= tenant.weight;
  }
  // Forgets the tenants that hold nothing and would start at the virtual time anyway.
  void forget_idle() {
    std::erase_if(tenants_, [this](const auto& named) {
      return named.second.load.sentences == 0 && named.second.finish <= virtual_time_;
    });
  }

  Tenants tenants_;            // see Tenant
  std::deque<Entry> retries_;  // ahead of every fresh sentence
  QueueLoad total_;
  int queued_weight_ = 0;    // priorities of the tenants with sentences queued
  double virtual_time_ = 0;  // start of the last fresh sentence admitted
  std::uint64_t next_order_ = 0;
};

}  // namespace rpt::server
