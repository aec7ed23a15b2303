#include "engine/cuda/device_weights.h"

#include <functional>
#include <map>
#include <tuple>
#include <utility>

#include "engine/dtype.h"
#include "kernels/errors.h"

namespace rpt {
namespace {

constexpr std::size_t kAlignment = 256;  // cudaMalloc's alignment: every tensor starts on one

// Host staging of all tensors in their device form; pointers are resolved after the upload.
class Staging {
 public:
  explicit Staging(kernels::Precision precision) : precision_(precision) {}

  // Stages `tensor` (float32 on the host) in the compute precision, or in float32 when
  // `keep_float32`; `*slot` receives its device address after upload(). Undefined: nullptr.
  template <typename Pointer>
  void add(const Tensor& tensor, Pointer* slot, bool keep_float32 = false) {
    if (!tensor.defined()) {
      *slot = nullptr;
      return;
    }
    const float* source = tensor.data<float>();
    const Key key{static_cast<const void*>(source), tensor.numel(), keep_float32};
    auto found = offsets_.find(key);
    std::size_t offset = 0;
    if (found != offsets_.end()) {
      offset = found->second;
    } else {
      offset = append(source, static_cast<std::size_t>(tensor.numel()),
                      keep_float32 ? kernels::Precision::kFloat32 : precision_);
      offsets_.emplace(key, offset);
    }
    fixups_.push_back(
        [slot, offset](const char* base) { *slot = reinterpret_cast<Pointer>(base + offset); });
  }
  void add(const Tensor& tensor, DeviceTable& table, bool keep_float32 = false) {
    add(tensor, &table.data, keep_float32);
    table.rows = tensor.defined() ? static_cast<int>(tensor.dim(0)) : 0;
    table.cols = tensor.defined() ? static_cast<int>(tensor.dim(1)) : 0;
  }

  void add_linear(const LinearWeights& layer, DeviceLinear& out) {
    RPT_CHECK(!layer.packed, InvalidArgument,
              "the model's weights are packed for the CPU: load it with "
              "ModelLoadOptions::cpu_layout false for a GPU");
    add(layer.weight, &out.weight);
    add(layer.bias, &out.bias);
    out.outputs = layer.out_features();
    out.inputs = layer.in_features();
  }
  void add_norm(const LayerNormWeights& norm, DeviceLayerNorm& out) {
    add(norm.gamma, &out.gamma);
    add(norm.beta, &out.beta);
  }
  void add_self_attention(const SelfAttentionWeights& weights, DeviceSelfAttention& out) {
    add_norm(weights.norm, out.norm);
    add_linear(weights.qkv, out.qkv);
    add_linear(weights.output, out.output);
    out.max_relative_position = weights.max_relative_position;
    add(weights.relative_keys, out.relative_keys);
    add(weights.relative_values, out.relative_values);
    add(weights.offset_bias, out.offset_bias, /*keep_float32=*/true);
  }
  void add_feed_forward(const FeedForwardWeights& ffn, DeviceFeedForward& out) {
    add_norm(ffn.norm, out.norm);
    if (ffn.gate.weight.defined()) add_linear(ffn.gate, out.gate);
    add_linear(ffn.inner, out.inner);
    add_linear(ffn.outer, out.outer);
  }

  std::size_t bytes() const { return bytes_.size(); }

  // Copies the staged bytes to `device` and fills every registered slot.
  void upload(kernels::DeviceBuffer& device) {
    device.copy_from_host(bytes_.data(), bytes_.size());
    const char* base = static_cast<const char*>(device.data());
    for (auto& fixup : fixups_) fixup(base);
  }

 private:
  std::size_t append(const float* source, std::size_t count, kernels::Precision precision) {
    const std::size_t offset = (bytes_.size() + kAlignment - 1) / kAlignment * kAlignment;
    bytes_.resize(offset + count * kernels::precision_size(precision));
    convert_from_float32(source, count, storage_dtype(precision), bytes_.data() + offset);
    return offset;
  }

  kernels::Precision precision_;
  std::vector<char> bytes_;
  // Host tensors already staged: the same data, size and precision are uploaded once.
  using Key = std::tuple<const void*, std::int64_t, bool>;
  std::map<Key, std::size_t> offsets_;
  std::vector<std::function<void(const char*)>> fixups_;
};

}  // namespace

DeviceWeights::DeviceWeights(const Model& model, kernels::Precision precision,
                             kernels::CudaStream stream, kernels::MemoryBudget* budget)
    : precision_(precision) {
  Staging staging(precision);
  staging.add(model.encoder_embeddings(), encoder_embeddings);
  staging.add(model.decoder_embeddings(), decoder_embeddings);
  encoder_layers.resize(model.encoder_layers().size());
  for (std::size_t l = 0; l < encoder_layers.size(); ++l) {
    staging.add_self_attention(model.encoder_layers()[l].self_attention,
                               encoder_layers[l].self_attention);
    staging.add_feed_forward(model.encoder_layers()[l].ffn, encoder_layers[l].ffn);
  }
  decoder_layers.resize(model.decoder_layers().size());
  for (std::size_t l = 0; l < decoder_layers.size(); ++l) {
    const DecoderLayerWeights& layer = model.decoder_layers()[l];
    staging.add_self_attention(layer.self_attention, decoder_layers[l].self_attention);
    staging.add_norm(layer.cross_attention.norm, decoder_layers[l].cross_attention.norm);
    staging.add_linear(layer.cross_attention.query, decoder_layers[l].cross_attention.query);
    staging.add_linear(layer.cross_attention.output, decoder_layers[l].cross_attention.output);
    staging.add_feed_forward(layer.ffn, decoder_layers[l].ffn);
  }
  staging.add_norm(model.encoder_norm(), encoder_norm);
  staging.add_norm(model.decoder_norm(), decoder_norm);
  staging.add_linear(model.memory_key_value(), memory_key_value);
  staging.add(model.generator().weight, &generator.weight);
  generator.outputs = model.generator().out_features();
  generator.inputs = model.generator().in_features();
  staging.add(model.generator().bias, &generator.bias, /*keep_float32=*/true);

  buffer_ = kernels::DeviceBuffer(staging.bytes(), stream, budget);
  staging.upload(buffer_);
}

}  // namespace rpt
