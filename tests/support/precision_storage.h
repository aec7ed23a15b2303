// float32 test values through the storage of a precision (engine/dtype.h conversions): what the
// model loader and the device see of them.
#pragma once

#include <cstddef>
#include <vector>

#include "engine/dtype.h"
#include "kernels/precision.h"

namespace rpt::testing {

// float32 values as stored in `precision` (float16 and bfloat16 round to nearest even).
inline std::vector<std::byte> to_storage(const std::vector<float>& values,
                                         kernels::Precision precision) {
  std::vector<std::byte> bytes(values.size() * kernels::precision_size(precision));
  convert_from_float32(values.data(), values.size(), storage_dtype(precision), bytes.data());
  return bytes;
}

inline std::vector<float> from_storage(const std::vector<std::byte>& bytes,
                                       kernels::Precision precision) {
  std::vector<float> values(bytes.size() / kernels::precision_size(precision));
  convert_to_float32(bytes.data(), storage_dtype(precision), values.size(), values.data());
  return values;
}

// The values `precision` can hold nearest to `values`: what a device sees after an upload.
inline std::vector<float> rounded(const std::vector<float>& values, kernels::Precision precision) {
  return from_storage(to_storage(values, precision), precision);
}

}  // namespace rpt::testing
