// The memory one loaded model and its decoders may hold: a charge that would pass `limit_bytes`
// throws ResourceExhausted before the memory is allocated. A budget with a parent (a decoder's
// within its engine's) charges the parent too and fails when either would pass its limit. The
// CUDA engine charges every device buffer (weights, caches, workspaces); the CPU engine charges
// its decoding state (encoder memory and KV caches; the weights are the Model's). Thread-safe.
#pragma once

#include <atomic>
#include <cstddef>

namespace rpt::kernels {

class MemoryBudget {
 public:
  // 0: no limit. The parent, if any, must outlive this budget.
  explicit MemoryBudget(std::size_t limit_bytes = 0, MemoryBudget* parent = nullptr);
  MemoryBudget(const MemoryBudget&) = delete;
  MemoryBudget& operator=(const MemoryBudget&) = delete;

  void reserve(std::size_t bytes);  // throws ResourceExhausted past the limit
  void release(std::size_t bytes) noexcept;
  std::size_t used_bytes() const { return used_.load(); }
  std::size_t peak_bytes() const { return peak_.load(); }
  std::size_t limit_bytes() const { return limit_; }

 private:
  std::size_t limit_;
  MemoryBudget* parent_;
  std::atomic<std::size_t> used_{0};
  std::atomic<std::size_t> peak_{0};
};

// Bytes charged to a budget for the charge's lifetime (a null budget charges nothing). Grows
// with grow_to(); releases everything when destroyed. Move-only.
class MemoryCharge {
 public:
  MemoryCharge() = default;
  explicit MemoryCharge(MemoryBudget* budget, std::size_t bytes = 0);
  ~MemoryCharge();
  MemoryCharge(MemoryCharge&& other) noexcept;
  MemoryCharge& operator=(MemoryCharge&& other) noexcept;
  MemoryCharge(const MemoryCharge&) = delete;
  MemoryCharge& operator=(const MemoryCharge&) = delete;

  // Charges the difference when `bytes` is more than is charged now; throws ResourceExhausted
  // (and keeps the old charge) past the budget's limit.
  void grow_to(std::size_t bytes);
  // Gives back the difference when `bytes` is less than is charged now.
  void shrink_to(std::size_t bytes) noexcept;
  std::size_t bytes() const { return bytes_; }

 private:
  MemoryBudget* budget_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace rpt::kernels
