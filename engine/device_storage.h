// How an accelerator engine holds weights: addresses in device memory, in the compute precision
// (float32 where engine/transformer_weights.h says so). Plain pointers, no device headers: the
// forward (engine/transformer.cc) is instantiated for this storage beside the CPU's, and the CUDA
// engine fills it (engine/cuda/device_weights.h).
#pragma once

namespace rpt {

struct DeviceLinear {
  const void* weight = nullptr;  // [out_features, in_features]
  // [out_features]; nullptr when the layer has none. In the compute precision, but for the
  // generator's, which is float32 (the logits are; TransformerOps::logits reads it).
  const void* bias = nullptr;
  int outputs = 0;
  int inputs = 0;
  int out_features() const { return outputs; }
  int in_features() const { return inputs; }
};

struct DeviceLayerNorm {
  const void* gamma = nullptr;  // [d_model]
  const void* beta = nullptr;   // [d_model]
};

struct DeviceTable {
  const void* data = nullptr;  // [rows, cols]; nullptr when the model has no such table
  int rows = 0;
  int cols = 0;
};

struct DeviceStorage {
  using Linear = DeviceLinear;
  using Norm = DeviceLayerNorm;
  using Table = DeviceTable;
};

}  // namespace rpt
