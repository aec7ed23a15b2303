// The CUDA stream type, named without including CUDA headers, so that op declarations compile in
// CPU-only builds and in code that must not see CUDA (engine headers, the server).
#pragma once

struct CUstream_st;

namespace rpt::kernels {

using CudaStream = CUstream_st*;  // the same type as cudaStream_t

}  // namespace rpt::kernels
