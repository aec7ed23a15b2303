// The CUDA graphs (kernels/cuda/cuda_graph.h), on the GPU alone: a captured GEMM + bias + ReLU
// replays its eager result bit for bit on new inputs, and a refused capture leaves the stream
// usable. Skips, visibly, without a GPU. The CUDA ops themselves are tested on every device from
// their own files, compiled into this binary (tests/support/op_targets.h): norms, activations,
// embedding, top-k, the cache ops, the fused attention and the GEMM.
#include <gtest/gtest.h>

#include <cstddef>
#include <memory>
#include <random>
#include <vector>

#include "kernels/activation.h"
#include "kernels/cuda/cublas_handle.h"
#include "kernels/cuda/cuda_graph.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/errors.h"
#include "kernels/gemm.h"
#include "tests/support/gpu_required.h"

namespace rpt::kernels {
namespace {

class CudaOpsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RPT_SKIP_WITHOUT_GPU("the CUDA graphs");
    stream_ = std::make_unique<CudaStreamOwner>();
  }

  template <typename T>
  DeviceBuffer upload(const std::vector<T>& host) {
    DeviceBuffer buffer(host.size() * sizeof(T), stream_->get());
    buffer.copy_from_host(host.data(), host.size() * sizeof(T));
    return buffer;
  }
  template <typename T>
  std::vector<T> download(const DeviceBuffer& buffer, std::size_t count) {
    std::vector<T> host(count);
    buffer.copy_to_host(host.data(), count * sizeof(T));
    return host;
  }
  std::vector<float> random_vector(std::size_t n) {
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> v(n);
    for (float& x : v) x = normal(random_);
    return v;
  }
  static void expect_near(const std::vector<float>& a, const std::vector<float>& b, double tol) {
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], tol) << "at " << i;
  }

  std::unique_ptr<CudaStreamOwner> stream_;
  std::mt19937 random_{5};
};

// y [m, n] = x [m, k] w^T in float32 (the graph tests' work).
void linear_float32(const DeviceBuffer& x, const DeviceBuffer& w, DeviceBuffer& y, int m, int n,
                    int k, CublasHandle& handle) {
  gemm_cuda({.input_precision = Precision::kFloat32,
             .output_precision = Precision::kFloat32,
             .transpose_b = true,
             .m = m,
             .n = n,
             .k = k,
             .a = x.data(),
             .lda = k,
             .b = w.data(),
             .ldb = k,
             .c = y.data(),
             .ldc = n},
            &handle);
}

// A captured GEMM + bias + ReLU replays what the eager calls compute, bit for bit, on inputs
// rewritten between launches (with both ways of choosing GEMM kernels).
TEST_F(CudaOpsTest, GraphReplaysCapturedWorkOnNewInputs) {
  const int m = 8, n = 24, k = 40;
  const auto weight = random_vector(static_cast<std::size_t>(n) * k);
  const auto bias = random_vector(n);
  const std::vector<std::vector<float>> inputs = {random_vector(static_cast<std::size_t>(m) * k),
                                                  random_vector(static_cast<std::size_t>(m) * k)};
  auto dw = upload(weight), db = upload(bias);
  auto dx = upload(inputs[0]);
  DeviceBuffer dy(static_cast<std::size_t>(m) * n * sizeof(float), stream_->get());
  for (const GemmAlgorithm algorithm :
       {GemmAlgorithm::kBatchInvariant, GemmAlgorithm::kHeuristic}) {
    CublasHandle handle(stream_->get(), algorithm);
    const auto work = [&] {
      linear_float32(dx, dw, dy, m, n, k, handle);
      bias_activation_cuda({.precision = Precision::kFloat32,
                            .x = dy.data(),
                            .bias = db.data(),
                            .rows = m,
                            .cols = n,
                            .activation = ActivationKind::kRelu},
                           stream_->get());
    };
    std::vector<std::vector<float>> expected;
    for (const auto& x : inputs) {
      dx.copy_from_host(x.data(), x.size() * sizeof(float));
      work();
      expected.push_back(download<float>(dy, static_cast<std::size_t>(m) * n));
    }
    EXPECT_NE(expected[0], expected[1]);
    const CudaGraph graph = CudaGraph::capture(stream_->get(), work);
    ASSERT_TRUE(graph);
    for (int round = 0; round < 2; ++round) {
      for (std::size_t i = 0; i < inputs.size(); ++i) {
        dx.copy_from_host(inputs[i].data(), inputs[i].size() * sizeof(float));
        dy.fill_zero();
        graph.launch(stream_->get());
        EXPECT_EQ(download<float>(dy, static_cast<std::size_t>(m) * n), expected[i])
            << "input " << i << ", round " << round;
      }
    }
  }
}

// Work that throws during capture, or that CUDA cannot capture (a synchronous copy), leaves the
// stream usable. (CUDA reports the refused calls as API errors: compute-sanitizer's runs leave
// this test out.)
TEST_F(CudaOpsTest, GraphCaptureRefusalLeavesTheStreamUsable) {
  const int m = 8, n = 24, k = 40;
  const auto weight = random_vector(static_cast<std::size_t>(n) * k);
  const auto input = random_vector(static_cast<std::size_t>(m) * k);
  auto dw = upload(weight), dx = upload(input);
  DeviceBuffer dy(static_cast<std::size_t>(m) * n * sizeof(float), stream_->get());
  EXPECT_THROW(
      CudaGraph::capture(stream_->get(), [] { RPT_THROW(InvalidArgument, "refused by the test"); }),
      InvalidArgument);
  std::vector<float> host(4);
  EXPECT_THROW(
      CudaGraph::capture(stream_->get(), [&] { dy.copy_to_host(host.data(), host.size() * 4); }),
      RuntimeFailure);
  // The stream still runs eager work.
  CublasHandle handle(stream_->get());
  linear_float32(dx, dw, dy, m, n, k, handle);
  const auto after = download<float>(dy, static_cast<std::size_t>(m) * n);
  std::vector<float> reference(static_cast<std::size_t>(m) * n, 0.0f);
  gemm_cpu({.transpose_b = true,
            .m = m,
            .n = n,
            .k = k,
            .a = input.data(),
            .lda = k,
            .b = weight.data(),
            .ldb = k,
            .c = reference.data(),
            .ldc = n});
  expect_near(after, reference, 1e-4);
}

}  // namespace
}  // namespace rpt::kernels
