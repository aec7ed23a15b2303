// A model's weights on a GPU, in the compute precision, in one device allocation: the same
// arrangement as the CPU Model (Q/K/V fused, all decoder layers' memory K/V fused, relative
// tables shared by every head and sequence, T5 biases expanded per offset in float32).
// Immutable after construction; the pointers are valid while the DeviceWeights lives.
#pragma once

#include <vector>

#include "engine/model.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/precision.h"

namespace rpt {

struct DeviceLinear {
  const void* weight = nullptr;  // [out_features, in_features]
  const void* bias = nullptr;    // [out_features]; nullptr when the layer has none
  int out_features = 0;
  int in_features = 0;
};

struct DeviceLayerNorm {
  const void* gamma = nullptr;  // [d_model]
  const void* beta = nullptr;   // [d_model]
};

struct DeviceSelfAttention {
  DeviceLayerNorm norm;
  DeviceLinear qkv;     // [3 d_model, d_model]
  DeviceLinear output;  // [d_model, d_model]
  int max_relative_position = 0;
  const void* relative_keys = nullptr;    // [2k+1, head_dim]
  const void* relative_values = nullptr;  // [2k+1, head_dim]
  const float* offset_bias = nullptr;     // T5: [heads, offset_bias_width], float32
  int offset_bias_width = 0;
};

struct DeviceCrossAttention {
  DeviceLayerNorm norm;
  DeviceLinear query;   // [d_model, d_model]
  DeviceLinear output;  // [d_model, d_model]
};

struct DeviceFeedForward {
  DeviceLayerNorm norm;
  DeviceLinear inner;  // [d_ff, d_model]
  DeviceLinear outer;  // [d_model, d_ff]
};

struct DeviceEncoderLayer {
  DeviceSelfAttention self_attention;
  DeviceFeedForward ffn;
};

struct DeviceDecoderLayer {
  DeviceSelfAttention self_attention;
  DeviceCrossAttention cross_attention;
  DeviceFeedForward ffn;
};

class DeviceWeights {
 public:
  // Converts and uploads every tensor of `model`; tensors shared on the host (tied embeddings,
  // shared relative tables) are uploaded once. Synchronises `stream` before returning.
  DeviceWeights(const Model& model, kernels::Precision precision, kernels::CudaStream stream,
                kernels::MemoryBudget* budget);

  kernels::Precision precision() const { return precision_; }
  std::size_t bytes() const { return buffer_.bytes(); }

  const void* encoder_embeddings = nullptr;  // [source_vocab, d_model]
  const void* decoder_embeddings = nullptr;  // [target_vocab, d_model]
  std::vector<DeviceEncoderLayer> encoder_layers;
  std::vector<DeviceDecoderLayer> decoder_layers;
  DeviceLayerNorm encoder_norm;
  DeviceLayerNorm decoder_norm;
  DeviceLinear memory_key_value;  // [decoder_layers * 2 d_model, d_model]
  DeviceLinear generator;         // [target_vocab, d_model]; its bias in float32
  const float* generator_bias = nullptr;

 private:
  kernels::Precision precision_;
  kernels::DeviceBuffer buffer_;
};

}  // namespace rpt
