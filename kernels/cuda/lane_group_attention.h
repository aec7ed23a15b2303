// The fused attention's lane-group kernel (CudaAttentionKernel::kLaneGroups in
// kernels/fused_attention.h), launched by fused_attention_cuda after its shape checks.
#pragma once

#include <cstddef>

#include "kernels/fused_attention.h"
#include "kernels/stream.h"

namespace rpt::kernels {

// Shared memory of one block at relative width 2k + 1.
std::size_t lane_group_attention_shared_bytes(int max_relative_position);
void lane_group_attention_cuda(const FusedAttentionArgs& args, CudaStream stream);

}  // namespace rpt::kernels
