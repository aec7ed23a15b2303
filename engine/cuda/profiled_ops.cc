#include "engine/cuda/profiled_ops.h"

#include <string>

namespace rpt {
namespace {

std::string shape_of(const char* what, const DeviceLinear& layer) {
  return std::string(what) + " " + std::to_string(layer.outputs) + "x" +
         std::to_string(layer.inputs);
}

}  // namespace

void ProfiledOps::embed(const DeviceTable& table, const int* ids, const int* positions, int count,
                        void* out) {
  ops_.embed(table, ids, positions, count, out);
  timer_.mark("embedding");
}

void ProfiledOps::norm(const DeviceLayerNorm& weights, const void* in, int rows, void* out) {
  ops_.norm(weights, in, rows, out);
  timer_.mark("norm");
}

void ProfiledOps::linear(const DeviceLinear& layer, const LinearCall& call) {
  ops_.linear(layer, call);
  timer_.mark(shape_of("linear", layer));
}

void ProfiledOps::packed_self_attention(const SelfAttentionOf<DeviceStorage>& weights,
                                        const void* qkv, int rows, void* context) {
  ops_.packed_self_attention(weights, qkv, rows, context);
  timer_.mark("encoder self-attention");
}

void ProfiledOps::cached_self_attention(const SelfAttentionOf<DeviceStorage>& weights, int layer,
                                        const void* qkv, int rows, void* context) {
  ops_.cached_self_attention(weights, layer, qkv, rows, context);
  timer_.mark("self-attention (cache append + attention)");
}

void ProfiledOps::cross_attention(int layer, const void* query, int rows, void* context) {
  ops_.cross_attention(layer, query, rows, context);
  timer_.mark("cross-attention");
}

void ProfiledOps::multiply(void* x, const void* y, int rows, int cols, int stride) {
  ops_.multiply(x, y, rows, cols, stride);
  timer_.mark("gate multiply");
}

void ProfiledOps::logits(const DeviceLinear& generator, const void* x, int rows, float* out) {
  ops_.logits(generator, x, rows, out);
  timer_.mark(shape_of("logits", generator));
}

}  // namespace rpt
