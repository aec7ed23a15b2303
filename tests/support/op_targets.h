// Op tests that state what an op must do on every device. One file per op is compiled twice: into
// kernels_test, where its suites run on the CPU (instances `Cpu/...`), and into cuda_ops_test with
// RPT_OP_TESTS_ON_CUDA=1, where they run on the GPU (instances `Cuda/...`), skipping visibly
// without one; each at the precisions `OpPrecisions` names. Expected values come from float64 or
// hand-written definitions; tolerances per target: `OpTargetTest::tolerance`.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/device.h"
#include "kernels/precision.h"
#include "tests/support/precision_storage.h"

#if RPT_OP_TESTS_ON_CUDA
#include "kernels/cuda/device_buffer.h"
#include "tests/support/gpu_required.h"
#define RPT_OP_TARGET_DEVICE Cuda
#else
#define RPT_OP_TARGET_DEVICE Cpu
#endif

namespace rpt::testing {

struct OpTarget {
  Device device = Device::kCpu;
  kernels::Precision precision = kernels::Precision::kFloat32;
};

inline void PrintTo(const OpTarget& target, std::ostream* out) {
  *out << device_name(target.device) << ' ' << kernels::precision_name(target.precision);
}

// Which precisions an op is tested at.
enum class OpPrecisions {
  kComputed,  // the CPU computes in float32 only; a GPU at float32, float16 and bfloat16
  kFloat32,   // the op reads float32 alone, on every device
  kCopied,    // the op only moves elements: every device at every storage precision
};

// This binary's targets: the CPU's (kernels_test) or CUDA's (cuda_ops_test).
inline std::vector<OpTarget> op_targets(OpPrecisions precisions = OpPrecisions::kComputed) {
#if RPT_OP_TESTS_ON_CUDA
  const Device device = Device::kCuda;
  const bool storage_precisions = precisions != OpPrecisions::kFloat32;
#else
  const Device device = Device::kCpu;
  const bool storage_precisions = precisions == OpPrecisions::kCopied;
#endif
  std::vector<OpTarget> targets = {{device, kernels::Precision::kFloat32}};
  if (storage_precisions) {
    targets.push_back({device, kernels::Precision::kFloat16});
    targets.push_back({device, kernels::Precision::kBFloat16});
  }
  return targets;
}

inline std::string op_target_name(const ::testing::TestParamInfo<OpTarget>& info) {
  return std::string(kernels::precision_name(info.param.precision));
}

class OpTargetTest : public ::testing::TestWithParam<OpTarget> {
 protected:
  void SetUp() override {
    if (GetParam().device == Device::kCpu) return;
#if RPT_OP_TESTS_ON_CUDA
    RPT_SKIP_WITHOUT_GPU("the op on the GPU");
    stream_ = std::make_unique<kernels::CudaStreamOwner>();
#else
    FAIL() << "CUDA targets run in cuda_ops_test";
#endif
  }

  kernels::Precision precision() const { return GetParam().precision; }

  // What the target's op reads of `values`: them rounded to its precision.
  std::vector<float> rounded(const std::vector<float>& values) const {
    return testing::rounded(values, precision());
  }

  // How far the target's result may be from the float64 definition. The CPU (float32):
  // `float32_bound`, its own rounding. A GPU: that plus what cuda_ops_test allows a device op
  // against the CPU: 1e-5 at float32 and, at float16 and bfloat16, the rounding of its output,
  // 1e-2 relative to max(1, |expected|). The output is of the target's precision, or of `output`
  // (an op may write another precision than it reads: the GEMM's float32 logits).
  double tolerance(double expected, double float32_bound) const {
    return tolerance(expected, float32_bound, precision());
  }
  double tolerance(double expected, double float32_bound, kernels::Precision output) const {
    if (GetParam().device == Device::kCpu) return float32_bound;
    if (output == kernels::Precision::kFloat32) return float32_bound + 1e-5;
    return float32_bound + 1e-2 * std::max(1.0, std::abs(expected));
  }

  // An array an op reads or writes, where the target's op finds it: host memory on the CPU,
  // device memory on a GPU. Floats are held in the target's precision, ints as they are.
  class Array {
   public:
    Array() = default;
    Array(Array&&) = default;
    Array& operator=(Array&&) = default;

    void* data() { return at(0); }
    // The element `index` elements in.
    void* at(long index) {
      return static_cast<std::byte*>(base()) + index * static_cast<long>(element_size_);
    }
    // Host pointers, for the CPU's ops.
    template <typename T>
    T* as() {
      return static_cast<T*>(data());
    }

   private:
    friend class OpTargetTest;
    void* base() {
#if RPT_OP_TESTS_ON_CUDA
      if (device_ != nullptr) return device_->data();
#endif
      return host_.data();
    }

    std::size_t element_size_ = 4;
    kernels::Precision precision_ = kernels::Precision::kFloat32;  // of floats
    std::vector<std::byte> host_;                                  // the CPU's
#if RPT_OP_TESTS_ON_CUDA
    std::unique_ptr<kernels::DeviceBuffer> device_;  // a GPU's
#endif
  };

  // `values` on the target, in its precision (or in `precision`: an op's output may be of another).
  Array floats(const std::vector<float>& values) const { return floats(values, precision()); }
  Array floats(const std::vector<float>& values, kernels::Precision precision) const {
    Array array = raw(to_storage(values, precision), precision_size(precision));
    array.precision_ = precision;
    return array;
  }
  // `values` on the target, as they are.
  Array ints(const std::vector<int>& values) const {
    std::vector<std::byte> bytes(values.size() * sizeof(int));
    if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
    return raw(std::move(bytes), sizeof(int));
  }
  // The first `count` floats of `array`, as float32.
  std::vector<float> read_floats(const Array& array, std::size_t count) const {
    return from_storage(read_raw(array, count * array.element_size_), array.precision_);
  }
  std::vector<int> read_ints(const Array& array, std::size_t count) const {
    const std::vector<std::byte> bytes = read_raw(array, count * sizeof(int));
    std::vector<int> values(count);
    if (count > 0) std::memcpy(values.data(), bytes.data(), bytes.size());
    return values;
  }

  // Calls `cpu()` on the CPU, `cuda(stream)` on a GPU. `cuda` is a generic lambda, so its body
  // (the CUDA op) is only instantiated where cuda_ops_test compiles the file.
  template <typename Cpu, typename Cuda>
  void run(Cpu&& cpu, [[maybe_unused]] Cuda&& cuda) {
    if (GetParam().device == Device::kCpu) {
      cpu();
      return;
    }
#if RPT_OP_TESTS_ON_CUDA
    cuda(stream_->get());
    stream_->synchronize();
#else
    FAIL() << "CUDA targets run in cuda_ops_test";
#endif
  }

  // `bytes` on the target, as they are, in elements of `element_size` bytes.
  Array raw(std::vector<std::byte> bytes, std::size_t element_size) const {
    Array array;
    array.element_size_ = element_size;
#if RPT_OP_TESTS_ON_CUDA
    if (GetParam().device == Device::kCuda) {
      array.device_ = std::make_unique<kernels::DeviceBuffer>(
          std::max<std::size_t>(bytes.size(), 1), stream_->get());
      if (!bytes.empty()) array.device_->copy_from_host(bytes.data(), bytes.size());
      return array;
    }
#endif
    array.host_ = std::move(bytes);
    return array;
  }
  // The first `bytes` bytes of `array`.
  std::vector<std::byte> read_raw(const Array& array, std::size_t bytes) const {
#if RPT_OP_TESTS_ON_CUDA
    if (array.device_ != nullptr) {
      std::vector<std::byte> host(bytes);
      if (bytes > 0) array.device_->copy_to_host(host.data(), bytes);
      return host;
    }
#endif
    return {array.host_.begin(), array.host_.begin() + static_cast<long>(bytes)};
  }

 private:
#if RPT_OP_TESTS_ON_CUDA
  std::unique_ptr<kernels::CudaStreamOwner> stream_;
#endif
};

}  // namespace rpt::testing

// Instantiates `suite` for this binary's targets: `Cpu/<suite>.<test>/<precision>` in
// kernels_test, `Cuda/<suite>.<test>/<precision>` in cuda_ops_test.
#define RPT_OP_TARGET_INSTANCES_(device, suite, targets)                \
  INSTANTIATE_TEST_SUITE_P(device, suite, ::testing::ValuesIn(targets), \
                           ::rpt::testing::op_target_name)
#define RPT_OP_TARGET_INSTANCES(suite, targets) \
  RPT_OP_TARGET_INSTANCES_(RPT_OP_TARGET_DEVICE, suite, targets)
