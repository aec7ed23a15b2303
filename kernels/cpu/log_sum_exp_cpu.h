// log(sum_i exp(x_i)) of a row of finite floats: the log-softmax normaliser of the vocabulary
// scan. Compiled with -ffast-math so the exp loop uses glibc's vector exp (libmvec); callers
// pass finite values only.
#pragma once

namespace rpt::kernels {

float log_sum_exp_cpu(const float* x,  // [count], finite
                      int count);

// The largest of `count` >= 1 finite floats, vectorised.
float max_cpu(const float* x, int count);

}  // namespace rpt::kernels
