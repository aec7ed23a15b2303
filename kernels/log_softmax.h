// Row-wise log-softmax in place, float32 (the decoder's output distribution).
#pragma once

namespace rpt::kernels {

void log_softmax_cpu(float* x,  // [rows, cols], in place
                     int rows, int cols);

}  // namespace rpt::kernels
