// The CUDA ops of a profiled decoder step (ComputeOptions::gpu_profile): each call forwarded to
// the real ops, then a StreamTimer mark naming what it launched, so the GPU time between marks is
// that op's. Linear layers are named by their weight's shape ("linear 4096x1024": outputs x
// inputs), which tells the projections and the feed-forward apart.
#pragma once

#include "engine/device_storage.h"
#include "engine/transformer.h"
#include "kernels/cuda/stream_timer.h"

namespace rpt {

class ProfiledOps final : public TransformerOps<DeviceStorage> {
 public:
  ProfiledOps(TransformerOps<DeviceStorage>& ops, kernels::StreamTimer& timer)
      : ops_(ops), timer_(timer) {}

  std::size_t element_bytes() const override { return ops_.element_bytes(); }
  void embed(const DeviceTable& table, const int* ids, const int* positions, int count,
             void* out) override;
  void norm(const DeviceLayerNorm& weights, const void* in, int rows, void* out) override;
  void linear(const DeviceLinear& layer, const LinearCall& call) override;
  void packed_self_attention(const SelfAttentionOf<DeviceStorage>& weights, const void* qkv,
                             int rows, void* context) override;
  void cached_self_attention(const SelfAttentionOf<DeviceStorage>& weights, int layer,
                             const void* qkv, int rows, void* context) override;
  void cross_attention(int layer, const void* query, int rows, void* context) override;
  void multiply(void* x, const void* y, int rows, int cols, int stride) override;
  void logits(const DeviceLinear& generator, const void* x, int rows, float* out) override;

 private:
  TransformerOps<DeviceStorage>& ops_;
  kernels::StreamTimer& timer_;
};

}  // namespace rpt
