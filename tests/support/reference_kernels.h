// Plain definitions of the GPU-only ops: the fused attention's expected values on every device
// (tests/kernels/fused_attention_test.cc), and the cache ops' CPU side in their device tests
// (tests/kernels/kv_cache_test.cc). The CPU engine does not run them: it computes attention and
// keeps its cache its own way (engine/cpu/attention.h, engine/cpu/position_tree.h), tested against
// the reference Transformer (tests/support/reference_transformer.h).
#pragma once

#include "kernels/fused_attention.h"
#include "kernels/kv_cache.h"

namespace rpt::kernels {

// float32 only: exact softmax over the materialised score row, every sum in double.
void reference_fused_attention(const FusedAttentionArgs& args);
// Every precision: the cache ops only move elements.
void reference_cache_append(const CacheAppendArgs& args);
void reference_cache_gather(const CacheGatherArgs& args);

}  // namespace rpt::kernels
