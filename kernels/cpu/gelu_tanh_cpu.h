// GELU in its tanh form (T5 v1.1's gelu_new, torch's gelu(approximate="tanh")) over a row, in
// place after an optional bias: 0.5 x (1 + tanh u) computed as x / (1 + exp(-2u)), the same
// function, with u = sqrt(2/pi) (x + 0.044715 x^3) taken at x clamped to [-9, 9] (where tanh u is
// already +-1 in float32) so that every exp stays finite. Compiled with -ffast-math so that the
// loop runs glibc's vector exp (libmvec); a scalar tanhf per element took a third of a gated
// model's decoding time.
#pragma once

namespace rpt::kernels {

void gelu_tanh_row_cpu(float* row,         // [count]
                       const float* bias,  // [count] or nullptr
                       int count);

}  // namespace rpt::kernels
