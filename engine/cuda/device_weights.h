// A model's weights on a GPU, in the compute precision, in one device allocation, in the
// arrangement the CPU Model holds (engine/transformer_weights.h): T5 biases and the generator's
// bias in float32.
// Immutable after construction; the pointers are valid while the DeviceWeights lives.
#pragma once

#include <vector>

#include "engine/device_storage.h"
#include "engine/model.h"
#include "engine/transformer_weights.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/precision.h"

namespace rpt {

using DeviceSelfAttention = SelfAttentionOf<DeviceStorage>;
using DeviceCrossAttention = CrossAttentionOf<DeviceStorage>;
using DeviceFeedForward = FeedForwardOf<DeviceStorage>;
using DeviceEncoderLayer = EncoderLayerOf<DeviceStorage>;
using DeviceDecoderLayer = DecoderLayerOf<DeviceStorage>;

class DeviceWeights : public TransformerWeightsOf<DeviceStorage> {
 public:
  // Converts and uploads every tensor of `model`; tensors shared on the host (tied embeddings,
  // shared relative tables) are uploaded once. Synchronises `stream` before returning.
  DeviceWeights(const Model& model, kernels::Precision precision, kernels::CudaStream stream,
                kernels::MemoryBudget* budget);

  kernels::Precision precision() const { return precision_; }
  std::size_t bytes() const { return buffer_.bytes(); }

 private:
  kernels::Precision precision_;
  kernels::DeviceBuffer buffer_;
};

}  // namespace rpt
