#include <bit>

#include "kernels/cpu/cpu_features.h"
#include "kernels/half_float.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace rpt::kernels {
namespace {

void halves_to_float_portable(const std::uint16_t* in, std::size_t count, float* out) {
  for (std::size_t i = 0; i < count; ++i) out[i] = half_to_float(in[i]);
}

#if defined(__x86_64__)
// Eight halves at a time with VCVTPH2PS, which is exact except that it quiets signalling NaNs:
// a group holding a NaN or an infinity (exponent all ones) goes through half_to_float instead.
__attribute__((target("avx,f16c"))) void halves_to_float_f16c(const std::uint16_t* in,
                                                              std::size_t count, float* out) {
  const __m128i exponent_mask = _mm_set1_epi16(0x7c00);
  std::size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m128i halves = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    const __m128i exponents = _mm_and_si128(halves, exponent_mask);
    if (_mm_movemask_epi8(_mm_cmpeq_epi16(exponents, exponent_mask)) != 0) {
      halves_to_float_portable(in + i, 8, out + i);
    } else {
      _mm256_storeu_ps(out + i, _mm256_cvtph_ps(halves));
    }
  }
  halves_to_float_portable(in + i, count - i, out + i);
}
#endif

}  // namespace

float half_to_float(std::uint16_t bits) {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  std::uint32_t exponent = (bits >> 10) & 0x1fu;
  std::uint32_t mantissa = bits & 0x3ffu;
  std::uint32_t out;
  if (exponent == 0x1f) {  // inf or nan
    out = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent != 0) {  // normal
    out = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {  // zero
    out = sign;
  } else {  // subnormal: renormalise
    exponent = 113;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      --exponent;
    }
    out = sign | (exponent << 23) | ((mantissa & 0x3ffu) << 13);
  }
  return std::bit_cast<float>(out);
}

void halves_to_float_cpu(const std::uint16_t* in, std::size_t count, float* out,
                         HalfConversion conversion) {
#if defined(__x86_64__)
  static const bool f16c = cpu_features().f16c;
  if (conversion == HalfConversion::kBest && f16c) {
    halves_to_float_f16c(in, count, out);
    return;
  }
#endif
  halves_to_float_portable(in, count, out);
}

}  // namespace rpt::kernels
