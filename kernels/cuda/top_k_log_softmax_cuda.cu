#include <cub/block/block_reduce.cuh>

#include "kernels/cuda/cuda_check.h"
#include "kernels/top_k_log_softmax.h"

namespace rpt::kernels {
namespace {

struct Maximum {
  __device__ __forceinline__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

constexpr int kThreads = 256;

struct Entry {
  float value;
  int id;
};

// The total order of the CPU definition: greater log-prob first, then the lower id.
__device__ __forceinline__ bool before(const Entry& a, const Entry& b) {
  return a.value != b.value ? a.value > b.value : a.id < b.id;
}

struct Better {
  __device__ __forceinline__ Entry operator()(const Entry& a, const Entry& b) const {
    return before(a, b) ? a : b;
  }
};

// One block per row: the log normaliser, then k rounds, each picking the best entry that comes
// after the previous pick in the total order (so no list of taken ids is needed).
__global__ void top_k_log_softmax_kernel(TopKLogSoftmaxArgs args) {
  using FloatReduce = cub::BlockReduce<float, kThreads>;
  using EntryReduce = cub::BlockReduce<Entry, kThreads>;
  __shared__ union {
    typename FloatReduce::TempStorage floats;
    typename EntryReduce::TempStorage entries;
  } storage;
  __shared__ float normaliser;
  __shared__ Entry previous;

  const float* row = args.logits + static_cast<long>(blockIdx.x) * args.vocab;
  const int blocked = args.blocked_token != nullptr ? args.blocked_token[blockIdx.x] : -1;

  float local_max = -INFINITY;
  for (int c = threadIdx.x; c < args.vocab; c += kThreads) local_max = fmaxf(local_max, row[c]);
  const float max_value = FloatReduce(storage.floats).Reduce(local_max, Maximum());
  if (threadIdx.x == 0) normaliser = max_value;
  __syncthreads();
  const float shift = normaliser;
  float local_sum = 0.0f;
  for (int c = threadIdx.x; c < args.vocab; c += kThreads) local_sum += expf(row[c] - shift);
  __syncthreads();
  const float sum = FloatReduce(storage.floats).Sum(local_sum);
  if (threadIdx.x == 0) {
    normaliser = shift + logf(sum);
    previous = {INFINITY, -1};  // before every entry
  }
  __syncthreads();
  const float log_normaliser = normaliser;

  for (int round = 0; round < args.k; ++round) {
    const Entry last = previous;
    Entry best{-INFINITY, 0x7fffffff};
    for (int c = threadIdx.x; c < args.vocab; c += kThreads) {
      const Entry entry{c == blocked ? args.blocked_log_prob : row[c] - log_normaliser, c};
      if (before(last, entry) && before(entry, best)) best = entry;
    }
    __syncthreads();
    const Entry chosen = EntryReduce(storage.entries).Reduce(best, Better());
    if (threadIdx.x == 0) {
      args.log_probs[static_cast<long>(blockIdx.x) * args.k + round] = chosen.value;
      args.ids[static_cast<long>(blockIdx.x) * args.k + round] = chosen.id;
      previous = chosen;
    }
    __syncthreads();
  }
}

}  // namespace

void top_k_log_softmax_cuda(const TopKLogSoftmaxArgs& args, CudaStream stream) {
  if (args.rows == 0) return;
  top_k_log_softmax_kernel<<<args.rows, kThreads, 0, stream>>>(args);
  RPT_CUDA_CHECK_LAUNCH();
}

}  // namespace rpt::kernels
