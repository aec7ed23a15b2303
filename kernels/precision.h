// The element type a kernel reads and writes (weights and activations); accumulation is always
// float32. CUDA ops take untyped pointers plus a Precision, so engine code that drives them is
// not templated and never sees CUDA's half types.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace rpt::kernels {

enum class Precision : std::uint8_t { kFloat32, kFloat16, kBFloat16 };

inline std::size_t precision_size(Precision precision) {
  return precision == Precision::kFloat32 ? 4 : 2;
}

inline std::string_view precision_name(Precision precision) {
  switch (precision) {
    case Precision::kFloat16:
      return "float16";
    case Precision::kBFloat16:
      return "bfloat16";
    case Precision::kFloat32:
      break;
  }
  return "float32";
}

}  // namespace rpt::kernels
