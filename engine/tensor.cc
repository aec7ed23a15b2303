#include "engine/tensor.h"

#include <cstdlib>
#include <cstring>
#include <sstream>

#include "kernels/errors.h"

namespace rpt {
namespace {

constexpr std::size_t kAlignment = 64;

std::shared_ptr<void> allocate_host(std::size_t bytes) {
  const std::size_t rounded = ((bytes + kAlignment - 1) / kAlignment) * kAlignment;
  void* memory = std::aligned_alloc(kAlignment, rounded == 0 ? kAlignment : rounded);
  RPT_CHECK(memory != nullptr, RuntimeFailure, "out of host memory allocating ", bytes, " bytes");
  return std::shared_ptr<void>(memory, std::free);
}

}  // namespace

std::int64_t shape_numel(const Shape& shape) {
  std::int64_t count = 1;
  for (std::int64_t extent : shape) count *= extent;
  return count;
}

std::string shape_string(const Shape& shape) {
  std::ostringstream out;
  out << '[';
  for (std::size_t i = 0; i < shape.size(); ++i) out << (i ? ", " : "") << shape[i];
  out << ']';
  return out.str();
}

Tensor Tensor::empty(const Shape& shape, DataType dtype) {
  for (std::int64_t extent : shape) {
    RPT_CHECK(extent >= 0, InvalidArgument, "negative extent in shape ", shape_string(shape));
  }
  Tensor tensor;
  tensor.shape_ = shape;
  tensor.dtype_ = dtype;
  tensor.storage_ = allocate_host(tensor.nbytes());
  return tensor;
}

Tensor Tensor::zeros(const Shape& shape, DataType dtype) {
  Tensor tensor = empty(shape, dtype);
  std::memset(tensor.storage_.get(), 0, tensor.nbytes());
  return tensor;
}

Tensor Tensor::borrow(const void* data, const Shape& shape, DataType dtype,
                      std::shared_ptr<const void> owner, Device device) {
  Tensor tensor;
  tensor.shape_ = shape;
  tensor.dtype_ = dtype;
  tensor.device_ = device;
  // Aliasing constructor: shares `owner`'s reference count, points at `data`.
  tensor.storage_ =
      std::shared_ptr<void>(std::const_pointer_cast<void>(owner), const_cast<void*>(data));
  return tensor;
}

std::int64_t Tensor::dim(int axis) const {
  const int r = rank();
  if (axis < 0) axis += r;
  RPT_CHECK(axis >= 0 && axis < r, InvalidArgument, "axis ", axis, " out of range for shape ",
            shape_string(shape_));
  return shape_[static_cast<std::size_t>(axis)];
}

Tensor Tensor::reshape(const Shape& shape) const {
  RPT_CHECK(shape_numel(shape) == numel(), InvalidArgument, "cannot reshape ", shape_string(shape_),
            " to ", shape_string(shape));
  Tensor view = *this;
  view.shape_ = shape;
  return view;
}

Tensor Tensor::slice_rows(std::int64_t begin, std::int64_t end) const {
  RPT_CHECK(rank() >= 1 && begin >= 0 && begin <= end && end <= shape_[0], InvalidArgument,
            "row slice [", begin, ", ", end, ") out of range for shape ", shape_string(shape_));
  Tensor view = *this;
  view.shape_[0] = end - begin;
  const std::int64_t row_elements = shape_[0] == 0 ? 0 : numel() / shape_[0];
  view.byte_offset_ += static_cast<std::size_t>(begin * row_elements) * dtype_size(dtype_);
  return view;
}

Tensor Tensor::to_float32() const {
  Tensor out = empty(shape_, DataType::kFloat32);
  to_float32(out.data<float>());
  return out;
}

void Tensor::to_float32(float* out) const {
  RPT_CHECK(device_ == Device::kCpu, InvalidArgument, "to_float32 needs a CPU tensor");
  convert_to_float32(static_cast<const char*>(storage_.get()) + byte_offset_, dtype_,
                     static_cast<std::size_t>(numel()), out);
}

void Tensor::check_type(DataType requested) const {
  const bool same_width = dtype_size(requested) == dtype_size(dtype_);
  const bool compatible = requested == dtype_ || (requested == DataType::kFloat16 &&
                                                  dtype_ == DataType::kBFloat16 && same_width);
  RPT_CHECK(compatible, InvalidArgument, "tensor holds ", dtype_name(dtype_), ", accessed as ",
            dtype_name(requested));
}

}  // namespace rpt
