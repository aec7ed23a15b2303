// float16 -> float32 (kernels/half_float.h): the F16C conversion and the portable one give the
// same bits for all 65,536 halves (signalling NaNs included, which VCVTPH2PS alone would quiet),
// at every length and offset its groups of eight and tail meet; the values are IEEE's.
#include "kernels/half_float.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace rpt::kernels {
namespace {

std::vector<std::uint32_t> converted(const std::vector<std::uint16_t>& halves, std::size_t first,
                                     std::size_t count, HalfConversion conversion) {
  std::vector<float> out(count);
  halves_to_float_cpu(halves.data() + first, count, out.data(), conversion);
  std::vector<std::uint32_t> bits(count);
  if (count > 0) std::memcpy(bits.data(), out.data(), count * sizeof(float));  // no null pointers
  return bits;
}

TEST(HalfToFloat, EveryHalfConvertsToTheSameBitsEitherWay) {
  std::vector<std::uint16_t> all(65536);
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<std::uint16_t>(i);
  EXPECT_EQ(converted(all, 0, all.size(), HalfConversion::kBest),
            converted(all, 0, all.size(), HalfConversion::kPortable));
}

TEST(HalfToFloat, OddLengthsAndOffsetsMatch) {
  // Groups of eight around a signalling NaN (0x7c01), an infinity and a subnormal, at offsets
  // and lengths that cut the groups anywhere.
  std::vector<std::uint16_t> halves(64);
  for (std::size_t i = 0; i < halves.size(); ++i) {
    halves[i] = static_cast<std::uint16_t>(0x3c00 + 37 * i);
  }
  halves[9] = 0x7c01;
  halves[20] = 0xfc00;
  halves[33] = 0x0001;
  for (std::size_t first = 0; first < 9; ++first) {
    for (std::size_t count = 0; first + count <= halves.size(); ++count) {
      ASSERT_EQ(converted(halves, first, count, HalfConversion::kBest),
                converted(halves, first, count, HalfConversion::kPortable))
          << first << " + " << count;
    }
  }
}

TEST(HalfToFloat, ValuesAreIeee) {
  EXPECT_EQ(half_to_float(0x3c00), 1.0f);
  EXPECT_EQ(half_to_float(0xc000), -2.0f);
  EXPECT_EQ(half_to_float(0x7bff), 65504.0f);
  EXPECT_EQ(half_to_float(0x0001), 0x1p-24f);  // the smallest subnormal
  EXPECT_EQ(half_to_float(0x7c00), INFINITY);
  EXPECT_EQ(std::bit_cast<std::uint32_t>(half_to_float(0x7c01)), 0x7f802000u);  // signalling
  EXPECT_EQ(std::bit_cast<std::uint32_t>(half_to_float(0x8000)), 0x80000000u);  // -0
}

}  // namespace
}  // namespace rpt::kernels
