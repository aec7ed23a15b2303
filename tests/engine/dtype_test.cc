// Host conversions between float32 and the half-precision storage types (engine/dtype.h): the
// model loader and the GPU parity tests rely on them rounding to nearest even.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/dtype.h"
#include "kernels/errors.h"
#include "kernels/precision.h"
#include "tests/support/precision_storage.h"

namespace rpt::kernels {
namespace {

using testing::rounded;

// The host rounding the half-precision cases rely on.
TEST(HostConversion, FloatToBFloat16RoundsToNearestEvenAndKeepsNaN) {
  EXPECT_EQ(float_to_bfloat16(1.0f), 0x3f80);
  EXPECT_EQ(float_to_bfloat16(1.0f + 0x1p-8f), 0x3f80);             // halfway: to the even 1.0
  EXPECT_EQ(float_to_bfloat16(1.0f + 3 * 0x1p-8f), 0x3f82);         // halfway: to the even above
  EXPECT_EQ(float_to_bfloat16(1.0f + 0x1p-8f + 0x1p-20f), 0x3f81);  // past halfway: up
  EXPECT_EQ(float_to_bfloat16(-2.5f), 0xc020);
  EXPECT_EQ(float_to_bfloat16(-INFINITY), 0xff80);
  EXPECT_EQ(float_to_bfloat16(3.4028235e38f), 0x7f80);  // rounds past the largest: infinity
  // A NaN whose payload lies in the dropped bits must not become infinity.
  const std::uint16_t nan_bits = float_to_bfloat16(std::bit_cast<float>(0x7f800001u));
  EXPECT_TRUE(std::isnan(bfloat16_to_float(nan_bits))) << std::hex << nan_bits;
  EXPECT_EQ(bfloat16_to_float(float_to_bfloat16(0.15625f)), 0.15625f);  // exact: unchanged
}

// Storage conversion both ways: exact values survive every precision,
// float16 rounds to nearest even, and int32 storage is refused.
TEST(HostConversion, StorageRoundTripsExactValues) {
  const std::vector<float> exact = {0.0f, 1.0f, -2.5f, 0.15625f, 1024.0f};
  for (auto precision : {Precision::kFloat32, Precision::kFloat16, Precision::kBFloat16}) {
    EXPECT_EQ(rounded(exact, precision), exact) << precision_name(precision);
  }
  EXPECT_EQ(rounded({1.0f + 0x1p-11f}, Precision::kFloat16)[0], 1.0f);  // halfway: to even
  std::uint32_t out = 0;
  const float one = 1.0f;
  EXPECT_THROW(convert_from_float32(&one, 1, DataType::kInt32, &out), InvalidArgument);
}

}  // namespace
}  // namespace rpt::kernels
