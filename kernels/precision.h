// The element type a kernel reads and writes (weights and activations); accumulation is always
// float32. CUDA ops take untyped pointers plus a Precision, so engine code that drives them is
// not templated and never sees CUDA's half types.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace rpt::kernels {

// kInt8 is a compute type of the CPU only: linear layers multiply int8 weights and activations
// (kernels/int8_gemm.h); everything else stays float32, so no kernel reads int8 elements.
enum class Precision : std::uint8_t { kFloat32, kFloat16, kBFloat16, kInt8 };

inline std::size_t precision_size(Precision precision) {
  switch (precision) {
    case Precision::kFloat32:
      return 4;
    case Precision::kInt8:
      return 1;
    case Precision::kFloat16:
    case Precision::kBFloat16:
      break;
  }
  return 2;
}

inline std::string_view precision_name(Precision precision) {
  switch (precision) {
    case Precision::kFloat16:
      return "float16";
    case Precision::kBFloat16:
      return "bfloat16";
    case Precision::kInt8:
      return "int8";
    case Precision::kFloat32:
      break;
  }
  return "float32";
}

}  // namespace rpt::kernels
