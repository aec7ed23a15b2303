// A dense, row-major, typed view of memory on one device.
//
// Ownership: a Tensor shares its storage (reference counted); copies of a Tensor alias the same
// memory. Storage is either allocated by the tensor or borrowed from an owner kept alive by the
// tensor (e.g. a memory-mapped weights file). Not thread-safe for concurrent mutation of the
// same storage; concurrent reads are fine.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "engine/device.h"
#include "engine/dtype.h"

namespace rpt {

using Shape = std::vector<std::int64_t>;

std::int64_t shape_numel(const Shape& shape);
std::string shape_string(const Shape& shape);

class Tensor {
 public:
  Tensor() = default;

  // Uninitialised storage of `shape` elements on the CPU.
  static Tensor empty(const Shape& shape, DataType dtype = DataType::kFloat32);
  static Tensor zeros(const Shape& shape, DataType dtype = DataType::kFloat32);
  // Borrows `data`; `owner` is kept alive as long as any tensor refers to it.
  static Tensor borrow(const void* data, const Shape& shape, DataType dtype,
                       std::shared_ptr<const void> owner, Device device = Device::kCpu);

  bool defined() const { return storage_ != nullptr; }
  const Shape& shape() const { return shape_; }
  std::int64_t dim(int axis) const;
  int rank() const { return static_cast<int>(shape_.size()); }
  std::int64_t numel() const { return shape_numel(shape_); }
  DataType dtype() const { return dtype_; }
  Device device() const { return device_; }
  std::size_t nbytes() const { return static_cast<std::size_t>(numel()) * dtype_size(dtype_); }

  // Typed access; throws if T does not match dtype().
  template <typename T>
  T* data();
  template <typename T>
  const T* data() const;

  // Same storage, new shape of the same element count.
  Tensor reshape(const Shape& shape) const;
  // Rows [begin, end) along axis 0, sharing storage.
  Tensor slice_rows(std::int64_t begin, std::int64_t end) const;
  // A deep copy converted to float32 (CPU).
  Tensor to_float32() const;
  // The same conversion into `out` [numel()] (CPU).
  void to_float32(float* out) const;

 private:
  void check_type(DataType requested) const;

  std::shared_ptr<void> storage_;
  std::size_t byte_offset_ = 0;
  Shape shape_;
  DataType dtype_ = DataType::kFloat32;
  Device device_ = Device::kCpu;
};

template <typename T>
constexpr DataType dtype_of();
template <>
constexpr DataType dtype_of<float>() {
  return DataType::kFloat32;
}
template <>
constexpr DataType dtype_of<std::int32_t>() {
  return DataType::kInt32;
}
template <>
constexpr DataType dtype_of<std::uint16_t>() {
  return DataType::kFloat16;
}
template <>
constexpr DataType dtype_of<std::int8_t>() {
  return DataType::kInt8;
}

template <typename T>
T* Tensor::data() {
  check_type(dtype_of<T>());
  return reinterpret_cast<T*>(static_cast<char*>(storage_.get()) + byte_offset_);
}

template <typename T>
const T* Tensor::data() const {
  check_type(dtype_of<T>());
  return reinterpret_cast<const T*>(static_cast<const char*>(storage_.get()) + byte_offset_);
}

}  // namespace rpt
