// Embedding lookup: out[t] = table[ids[t]] * scale (+ sinusoidal encoding of positions[t]).
#pragma once

#include "kernels/precision.h"
#include "kernels/stream.h"

namespace rpt::kernels {

struct EmbeddingArgs {
  const int* ids = nullptr;  // [count]
  int count = 0;
  // [vocab, dim]; nullptr: `out` already holds each id's row (a caller that gathered them from a
  // table of its own form), which are scaled and encoded in place.
  const float* table = nullptr;
  int vocab = 0;
  int dim = 0;
  float scale = 1.0f;
  // Absolute positions [count] for sinusoidal encodings (interleaved sin/cos); nullptr: none.
  const int* positions = nullptr;
  float* out = nullptr;  // [count, dim]
};

// Ids outside [0, vocab) are the caller's bug; they are checked in the engine before the call.
void embedding_cpu(const EmbeddingArgs& args);

// The same on the device: ids and positions are device arrays, table and out of `precision`
// (the sum is formed in float32 and rounded once).
struct EmbeddingCudaArgs {
  Precision precision = Precision::kFloat32;
  const int* ids = nullptr;  // [count], device
  int count = 0;
  const void* table = nullptr;  // [vocab, dim]
  int dim = 0;
  float scale = 1.0f;
  const int* positions = nullptr;  // [count], device; nullptr: no sinusoidal encoding
  void* out = nullptr;             // [count, dim]
};

void embedding_cuda(const EmbeddingCudaArgs& args, CudaStream stream);

}  // namespace rpt::kernels
