#include "kernels/memory_budget.h"

#include <utility>

#include "kernels/errors.h"

namespace rpt::kernels {

MemoryBudget::MemoryBudget(std::size_t limit_bytes, MemoryBudget* parent)
    : limit_(limit_bytes), parent_(parent) {}

void MemoryBudget::reserve(std::size_t bytes) {
  std::size_t used = used_.load();
  do {
    if (limit_ != 0 && (used > limit_ || bytes > limit_ - used)) {
      RPT_THROW(ResourceExhausted, "memory limit: ", bytes, " more bytes would exceed ", limit_,
                " (", used, " in use)");
    }
  } while (!used_.compare_exchange_weak(used, used + bytes));
  if (parent_ != nullptr) {
    try {
      parent_->reserve(bytes);
    } catch (...) {
      used_.fetch_sub(bytes);
      throw;
    }
  }
  // Only charges that stand count towards the peak.
  std::size_t peak = peak_.load();
  while (used + bytes > peak && !peak_.compare_exchange_weak(peak, used + bytes)) {
  }
}

void MemoryBudget::release(std::size_t bytes) noexcept {
  used_.fetch_sub(bytes);
  if (parent_ != nullptr) parent_->release(bytes);
}

MemoryCharge::MemoryCharge(MemoryBudget* budget, std::size_t bytes) : budget_(budget) {
  grow_to(bytes);
}

MemoryCharge::~MemoryCharge() {
  if (budget_ != nullptr) budget_->release(bytes_);
}

MemoryCharge::MemoryCharge(MemoryCharge&& other) noexcept
    : budget_(other.budget_), bytes_(std::exchange(other.bytes_, 0)) {}

MemoryCharge& MemoryCharge::operator=(MemoryCharge&& other) noexcept {
  if (this != &other) {
    if (budget_ != nullptr) budget_->release(bytes_);
    budget_ = other.budget_;
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void MemoryCharge::grow_to(std::size_t bytes) {
  if (bytes <= bytes_) return;
  if (budget_ != nullptr) budget_->reserve(bytes - bytes_);
  bytes_ = bytes;
}

void MemoryCharge::shrink_to(std::size_t bytes) noexcept {
  if (bytes >= bytes_) return;
  if (budget_ != nullptr) budget_->release(bytes_ - bytes);
  bytes_ = bytes;
}

}  // namespace rpt::kernels
