#include <cub/block/block_reduce.cuh>

#include "kernels/cuda/cuda_check.h"
#include "kernels/position.h"
#include "kernels/relative_softmax.h"

namespace rpt::kernels {
namespace {

struct Maximum {
  __device__ __forceinline__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

constexpr int kThreads = 128;

// One block per (query row, head, sequence). Three passes over the row in global memory: add the
// position terms and find the max, exponentiate and sum, normalise and sum the two edge buckets
// (keys at distance >= k on either side); the 2k - 1 middle buckets are single keys.
__global__ void relative_softmax_kernel(BatchedRelativeSoftmaxArgs args) {
  using Reduce = cub::BlockReduce<float, kThreads>;
  __shared__ typename Reduce::TempStorage storage;
  __shared__ float broadcast;

  const int i = blockIdx.x;
  const int h = blockIdx.y;
  const int b = blockIdx.z;
  const int valid_queries = args.query_lengths != nullptr ? args.query_lengths[b] : args.queries;
  if (i >= valid_queries) return;
  const int keys = args.key_lengths[b];
  const int position = args.query_positions[b] + i;
  const int k = args.max_relative_position;
  const int width = 2 * k + 1;
  float* row = args.scores +
               ((static_cast<long>(b) * args.heads + h) * args.queries + i) * args.key_stride;
  const long table_row = ((static_cast<long>(b) * args.queries + i) * args.heads + h) * width;
  const float* key_term = args.key_term != nullptr ? args.key_term + table_row : nullptr;
  const float* bias = args.offset_bias != nullptr
                          ? args.offset_bias + static_cast<long>(h) * args.offset_bias_width +
                                (args.offset_bias_width - 1) / 2
                          : nullptr;

  float local_max = -INFINITY;
  for (int j = threadIdx.x; j < keys; j += kThreads) {
    float v = row[j];
    if (key_term != nullptr) v += key_term[relative_index(position, j, k)];
    if (bias != nullptr) v += bias[j - position];
    row[j] = v;
    local_max = fmaxf(local_max, v);
  }
  const float block_max = Reduce(storage).Reduce(local_max, Maximum());
  if (threadIdx.x == 0) broadcast = block_max;
  __syncthreads();
  const float max_value = broadcast;

  float local_sum = 0.0f;
  for (int j = threadIdx.x; j < keys; j += kThreads) {
    const float e = expf(row[j] - max_value);
    row[j] = e;
    local_sum += e;
  }
  __syncthreads();  // storage reuse
  const float block_sum = Reduce(storage).Sum(local_sum);
  if (threadIdx.x == 0) broadcast = 1.0f / block_sum;
  __syncthreads();
  const float inv_sum = broadcast;

  float left = 0.0f;
  float right = 0.0f;
  for (int j = threadIdx.x; j < keys; j += kThreads) {
    const float alpha = row[j] * inv_sum;
    row[j] = alpha;
    if (k == 0 || j - position <= -k) {
      left += alpha;
    } else if (j - position >= k) {
      right += alpha;
    }
  }
  if (args.bucket_sums == nullptr) return;
  __syncthreads();
  const float left_sum = Reduce(storage).Sum(left);
  __syncthreads();
  const float right_sum = Reduce(storage).Sum(right);
  __syncthreads();  // every alpha is written before the middle buckets read them
  float* sums = args.bucket_sums + table_row;
  // Block reductions hand their result to thread 0 only: it writes the edge buckets.
  if (threadIdx.x == 0) {
    sums[0] = left_sum;
    if (k > 0) sums[2 * k] = right_sum;
  }
  for (int r = 1 + threadIdx.x; r < 2 * k; r += kThreads) {
    const int j = position + r - k;
    sums[r] = j >= 0 && j < keys ? row[j] : 0.0f;
  }
}

}  // namespace

void relative_softmax_batched_cuda(const BatchedRelativeSoftmaxArgs& args, CudaStream stream) {
  if (args.batch == 0 || args.heads == 0 || args.queries == 0) return;
  // grid.y and grid.z are at most 65535 (grid.x: 2^31 - 1).
  RPT_CHECK(args.heads <= 65535 && args.batch <= 65535, InvalidArgument,
            "relative softmax of ", args.batch, " sequences x ", args.heads,
            " heads exceeds the launch grid");
  const dim3 grid(args.queries, args.heads, args.batch);
  relative_softmax_kernel<<<grid, kThreads, 0, stream>>>(args);
  RPT_CUDA_CHECK_LAUNCH();
}

}  // namespace rpt::kernels
