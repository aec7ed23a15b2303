#include "engine/cuda/device_weights.h"

#include <functional>
#include <map>
#include <tuple>
#include <utility>

#include "engine/dtype.h"
#include "engine/weight_tensors.h"
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

  // The visits of for_each_weight (engine/weight_tensors.h): each member of the host's weights
  // staged for the device's.
  void stage(const TableSpec& spec, const Tensor& table, DeviceTable& out) {
    RPT_CHECK(!table.defined() || table.dtype() == DataType::kFloat32, InvalidArgument,
              "the model's embeddings are kept in the weights file's form for the CPU: load it "
              "with ModelLoadOptions::cpu_layout false for a GPU");
    add(table, out, /*keep_float32=*/spec.kind == TableKind::kT5Bias);
  }
  void stage(const NormSpec&, const LayerNormWeights& norm, DeviceLayerNorm& out) {
    add(norm.gamma, &out.gamma);
    add(norm.beta, &out.beta);
  }
  void stage(const LinearSpec& spec, const LinearWeights& layer, DeviceLinear& out) {
    if (spec.first_row > 0) return;  // the host's member is whole: staged at its first part
    RPT_CHECK(!layer.packed, InvalidArgument,
              "the model's weights are packed for the CPU: load it with "
              "ModelLoadOptions::cpu_layout false for a GPU");
    add(layer.weight, &out.weight);
    add(layer.bias, &out.bias, /*keep_float32=*/spec.generator);
    out.outputs = layer.out_features();
    out.inputs = layer.in_features();
  }
  // A member sharing another's host storage shares its device storage too (add stages the same
  // host data once).
  template <class Spec, class Host, class HostSource, class Device, class DeviceSource>
  void stage(const Spec& spec, Shared<Host, HostSource> host, Shared<Device, DeviceSource> device) {
    stage(spec, host.member, device.member);
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
  TransformerWeightsOf<DeviceStorage>& weights = *this;
  for_each_weight(
      model.config(), model.source_vocabulary().size(), model.target_vocabulary().size(),
      [&staging](const auto& spec, auto&& host, auto&& device) {
        staging.stage(spec, host, device);
      },
      model.weights(), weights);

  buffer_ = kernels::DeviceBuffer(staging.bytes(), stream, budget);
  staging.upload(buffer_);
}

}  // namespace rpt
