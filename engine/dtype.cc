#include "engine/dtype.h"

#include <bit>
#include <cstring>

#include "kernels/errors.h"

namespace rpt {

std::size_t dtype_size(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat32:
    case DataType::kInt32:
      return 4;
    case DataType::kFloat16:
    case DataType::kBFloat16:
      return 2;
    case DataType::kInt8:
      return 1;
  }
  RPT_THROW(InvalidArgument, "unknown dtype");
}

std::string_view dtype_name(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat32:
      return "float32";
    case DataType::kFloat16:
      return "float16";
    case DataType::kBFloat16:
      return "bfloat16";
    case DataType::kInt32:
      return "int32";
    case DataType::kInt8:
      return "int8";
  }
  return "unknown";
}

DataType parse_dtype(std::string_view name) {
  if (name == "float32") return DataType::kFloat32;
  if (name == "float16") return DataType::kFloat16;
  if (name == "bfloat16") return DataType::kBFloat16;
  if (name == "int32") return DataType::kInt32;
  if (name == "int8") return DataType::kInt8;
  RPT_THROW(InvalidArgument, "unknown dtype '", name,
            "' (expected float32, float16, bfloat16, int32 or int8)");
}

std::uint16_t float_to_half(float value) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(value);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or nan
    return static_cast<std::uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
  }
  if (abs >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // overflow
  if (abs < 0x38800000u) {                                  // subnormal or zero in half precision
    const float magic = std::bit_cast<float>(0x3f000000u);  // 0.5: shifts mantissa into place
    const float shifted = std::bit_cast<float>(abs) + magic;
    return static_cast<std::uint16_t>(sign | (std::bit_cast<std::uint32_t>(shifted) - 0x3f000000u));
  }
  const std::uint32_t rounded = abs + 0xfffu + ((abs >> 13) & 1u) - (112u << 23);
  return static_cast<std::uint16_t>(sign | (rounded >> 13));
}

float bfloat16_to_float(std::uint16_t bits) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

std::uint16_t float_to_bfloat16(float value) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(value);
  // Truncating a NaN could clear every mantissa bit kept (an infinity); set the quiet bit.
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);
  // Adding 0x7fff plus the lowest kept bit rounds half to even; a carry into the exponent is
  // the correct rounding up (to the next binade or to infinity).
  const std::uint32_t rounded = x + 0x7fffu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>(rounded >> 16);
}

DataType storage_dtype(kernels::Precision precision) {
  switch (precision) {
    case kernels::Precision::kFloat16:
      return DataType::kFloat16;
    case kernels::Precision::kBFloat16:
      return DataType::kBFloat16;
    case kernels::Precision::kInt8:  // CPU only; its float tensors stay float32
    case kernels::Precision::kFloat32:
      break;
  }
  return DataType::kFloat32;
}

void convert_from_float32(const float* source, std::size_t count, DataType dtype, void* out) {
  if (count == 0) return;  // (an empty vector's data() may be null: memcpy must not see it)
  auto* bits = static_cast<std::uint16_t*>(out);
  switch (dtype) {
    case DataType::kFloat32:
      std::memcpy(out, source, count * sizeof(float));
      return;
    case DataType::kFloat16:
      for (std::size_t i = 0; i < count; ++i) bits[i] = float_to_half(source[i]);
      return;
    case DataType::kBFloat16:
      for (std::size_t i = 0; i < count; ++i) bits[i] = float_to_bfloat16(source[i]);
      return;
    case DataType::kInt32:
    case DataType::kInt8:
      break;
  }
  RPT_THROW(InvalidArgument, "cannot store float32 values as ", dtype_name(dtype));
}

void convert_to_float32(const void* source, DataType dtype, std::size_t count, float* out) {
  if (count == 0) return;
  switch (dtype) {
    case DataType::kFloat32:
      std::memcpy(out, source, count * sizeof(float));
      return;
    case DataType::kFloat16: {
      kernels::halves_to_float_cpu(static_cast<const std::uint16_t*>(source), count, out);
      return;
    }
    case DataType::kBFloat16: {
      const auto* in = static_cast<const std::uint16_t*>(source);
      for (std::size_t i = 0; i < count; ++i) out[i] = bfloat16_to_float(in[i]);
      return;
    }
    case DataType::kInt32:
    case DataType::kInt8:  // needs its row scales: ModelLoader dequantizes
      break;
  }
  RPT_THROW(InvalidArgument, "cannot convert ", dtype_name(dtype), " to float32");
}

}  // namespace rpt
