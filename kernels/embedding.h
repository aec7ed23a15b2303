// Embedding lookup: out[t] = table[ids[t]] * scale (+ sinusoidal encoding of positions[t]).
#pragma once

namespace rpt::kernels {

struct EmbeddingArgs {
  const int* ids = nullptr;    // [count]
  int count = 0;
  const float* table = nullptr;  // [vocab, dim]
  int vocab = 0;
  int dim = 0;
  float scale = 1.0f;
  // Absolute positions [count] for sinusoidal encodings (interleaved sin/cos); nullptr: none.
  const int* positions = nullptr;
  float* out = nullptr;  // [count, dim]
};

// Ids outside [0, vocab) are the caller's bug; they are checked in the engine before the call.
void embedding_cpu(const EmbeddingArgs& args);

}  // namespace rpt::kernels
