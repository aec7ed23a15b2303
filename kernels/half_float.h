// float16 (IEEE binary16) to float32, exactly: every half, subnormals, infinities and NaNs (a
// signalling NaN stays signalling, its payload kept) becomes the same float32 bits whichever way
// it is converted. For the model loader (float16 weights files) and float16 embedding rows.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>

namespace rpt::kernels {

float half_to_float(std::uint16_t bits);

enum class HalfConversion {
  kBest,      // F16C where the CPU has it (read once, at run time), else kPortable
  kPortable,  // half_to_float, one at a time: every x86-64 and other CPUs
};

// in [count] -> out [count], the same bits for either conversion.
void halves_to_float_cpu(const std::uint16_t* in, std::size_t count, float* out,
                         HalfConversion conversion = HalfConversion::kBest);

}  // namespace rpt::kernels
