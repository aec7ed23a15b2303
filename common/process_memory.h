// Process-wide allocator settings for the programs that decode (rpt-translate, rpt-server).
#pragma once

#include <cstddef>

namespace rpt {

// glibc's malloc hands freed blocks above its thresholds (128 KiB at first, adapting up to
// 32 MiB) back to the kernel at once, so the buffers every decoder step allocates and frees
// (logits [rows, vocab]: 4 MiB at 128 rows, attention scores, layer outputs) come back as fresh
// pages the next step: page faults and kernel zeroing on every step. This serves blocks up to
// `reuse_bytes` (32 MiB at most: glibc's bound) from the heap and keeps up to `reuse_bytes` of
// freed memory there for the next step. Peak RSS does not grow (the same blocks are reused);
// memory freed after a burst stays with the process up to `reuse_bytes`. glibc only.
void keep_freed_memory_for_reuse(std::size_t reuse_bytes = std::size_t{256} << 20);

// Hands the heap's free pages back to the system now, whatever the thresholds above: after
// freeing what will not be needed again (a model load's per-layer float32 copies, which
// otherwise stay resident as holes between the weights kept). glibc only.
void return_freed_memory();

}  // namespace rpt
