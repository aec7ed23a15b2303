// Element types of tensors and the conversions between them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "kernels/half_float.h"
#include "kernels/precision.h"

namespace rpt {

// kInt8: linear weights quantized per output row, each `X.weight` with a float32 `X.weight_scale`
// [rows] beside it (docs/model-format.md); read through the scales, never converted alone.
enum class DataType : std::uint8_t { kFloat32, kFloat16, kBFloat16, kInt32, kInt8 };

std::size_t dtype_size(DataType dtype);
std::string_view dtype_name(DataType dtype);
// Parses "float32" | "float16" | "bfloat16" | "int32" | "int8"; throws InvalidArgument otherwise.
DataType parse_dtype(std::string_view name);

// IEEE binary16 <-> binary32, round to nearest even (half_to_float: kernels/half_float.h, exact).
using kernels::half_to_float;
std::uint16_t float_to_half(float value);
float bfloat16_to_float(std::uint16_t bits);
// Round to nearest even; NaN stays NaN (quiet, same sign), overflow becomes infinity.
std::uint16_t float_to_bfloat16(float value);

// The element type a kernel precision stores.
DataType storage_dtype(kernels::Precision precision);

// Converts `count` elements of `source` (any floating dtype) to float32 into `out`.
void convert_to_float32(const void* source, DataType dtype, std::size_t count, float* out);
// The reverse: `count` float32 values stored as `dtype` (float32, float16 or bfloat16; round to
// nearest even) into `out`.
void convert_from_float32(const float* source, std::size_t count, DataType dtype, void* out);

}  // namespace rpt
