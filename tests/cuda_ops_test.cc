// Every CUDA op against its CPU definition (float32: 1e-5). Skips, visibly, without a GPU.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "kernels/activation.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/gemm.h"
#include "kernels/layer_norm.h"
#include "kernels/relative_softmax.h"
#include "kernels/top_k_log_softmax.h"

namespace rpt::kernels {
namespace {

class CudaOpsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device: GPU parity not checked here";
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
  std::vector<float> random_vector(std::size_t n, float scale = 1.0f) {
    std::normal_distribution<float> normal(0.0f, scale);
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

TEST_F(CudaOpsTest, LayerNorm) {
  const int rows = 7, dim = 300;
  const auto x = random_vector(rows * dim, 3.0f), gamma = random_vector(dim), beta = random_vector(dim);
  std::vector<float> expected(x.size());
  layer_norm_cpu(x.data(), gamma.data(), beta.data(), rows, dim, 1e-6f, expected.data());
  auto dx = upload(x), dg = upload(gamma), db = upload(beta);
  DeviceBuffer out(x.size() * sizeof(float), stream_->get());
  layer_norm_cuda(dx.as<float>(), dg.as<float>(), db.as<float>(), rows, dim, 1e-6f,
                  out.as<float>(), stream_->get());
  expect_near(download<float>(out, x.size()), expected, 1e-5);
}

TEST_F(CudaOpsTest, BiasActivation) {
  const int rows = 5, cols = 333;
  for (auto activation : {ActivationKind::kIdentity, ActivationKind::kRelu, ActivationKind::kGelu,
                          ActivationKind::kSilu}) {
    auto x = random_vector(rows * cols, 2.0f);
    const auto bias = random_vector(cols);
    auto dx = upload(x), db = upload(bias);
    bias_activation_cpu(x.data(), bias.data(), rows, cols, activation);
    bias_activation_cuda(dx.as<float>(), db.as<float>(), rows, cols, activation, stream_->get());
    expect_near(download<float>(dx, x.size()), x, 1e-5);
  }
}

TEST_F(CudaOpsTest, GemmAllTranspositions) {
  CublasHandle handle(stream_->get());
  const int m = 9, n = 13, k = 21;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      const auto a = random_vector(m * k), b = random_vector(k * n);
      auto c = random_vector(m * n);
      GemmArgs args{.transpose_a = ta, .transpose_b = tb, .m = m, .n = n, .k = k, .alpha = 0.5f,
                    .a = a.data(), .lda = ta ? m : k, .b = b.data(), .ldb = tb ? k : n,
                    .beta = 1.0f, .c = nullptr, .ldc = n};
      auto da = upload(a), db = upload(b), dc = upload(c);
      std::vector<float> expected = c;
      args.c = expected.data();
      gemm_cpu(args);
      args.a = da.as<float>();
      args.b = db.as<float>();
      args.c = dc.as<float>();
      gemm_cuda(args, handle.get());
      expect_near(download<float>(dc, c.size()), expected, 1e-4);
    }
  }
}

struct SoftmaxCase {
  int k;
  bool t5;
  bool buckets;
};

void PrintTo(const SoftmaxCase& c, std::ostream* out) {
  *out << "k" << c.k << (c.t5 ? "_t5" : "") << (c.buckets ? "_buckets" : "");
}

class CudaRelativeSoftmaxTest : public CudaOpsTest,
                                public ::testing::WithParamInterface<SoftmaxCase> {};

TEST_P(CudaRelativeSoftmaxTest, MatchesCpuOnAPaddedBatch) {
  const SoftmaxCase c = GetParam();
  const int batch = 3, heads = 2, queries = 11, key_stride = 11, width = 2 * c.k + 1;
  const std::vector<int> key_lengths = {11, 4, 7}, query_lengths = {11, 4, 7};
  const std::vector<int> positions = {0, 0, 0};
  const int bias_width = 2 * 16 + 1;
  auto scores = random_vector(batch * heads * queries * key_stride);
  const auto key_term = random_vector(batch * queries * heads * width);
  const auto offset_bias = random_vector(heads * bias_width);
  std::vector<float> buckets(batch * queries * heads * width, 0.0f);

  auto d_scores = upload(scores), d_key_term = upload(key_term), d_bias = upload(offset_bias);
  auto d_buckets = upload(buckets), d_keys = upload(key_lengths), d_queries = upload(query_lengths),
       d_positions = upload(positions);
  BatchedRelativeSoftmaxArgs args{.scores = scores.data(), .batch = batch, .heads = heads,
                                  .queries = queries, .key_stride = key_stride,
                                  .key_lengths = key_lengths.data(),
                                  .query_lengths = query_lengths.data(),
                                  .query_positions = positions.data(),
                                  .max_relative_position = c.k,
                                  .key_term = c.t5 ? nullptr : key_term.data(),
                                  .bucket_sums = c.buckets ? buckets.data() : nullptr,
                                  .offset_bias = c.t5 ? offset_bias.data() : nullptr,
                                  .offset_bias_width = bias_width};
  relative_softmax_batched_cpu(args);
  args.scores = d_scores.as<float>();
  args.key_lengths = d_keys.as<int>();
  args.query_lengths = d_queries.as<int>();
  args.query_positions = d_positions.as<int>();
  args.key_term = c.t5 ? nullptr : d_key_term.as<float>();
  args.bucket_sums = c.buckets ? d_buckets.as<float>() : nullptr;
  args.offset_bias = c.t5 ? d_bias.as<float>() : nullptr;
  relative_softmax_batched_cuda(args, stream_->get());
  expect_near(download<float>(d_scores, scores.size()), scores, 1e-5);
  if (c.buckets) expect_near(download<float>(d_buckets, buckets.size()), buckets, 1e-5);
}

INSTANTIATE_TEST_SUITE_P(Variants, CudaRelativeSoftmaxTest,
                         ::testing::Values(SoftmaxCase{3, false, true}, SoftmaxCase{0, false, true},
                                           SoftmaxCase{16, false, true}, SoftmaxCase{0, true, false},
                                           SoftmaxCase{2, false, false}));

TEST_F(CudaOpsTest, DecoderStepRowsAtDifferentPositions) {
  // queries = 1 per sequence, each at its own step t (keys = t + 1).
  const int batch = 4, heads = 3, k = 2, width = 2 * k + 1, key_stride = 40;
  const std::vector<int> positions = {0, 5, 17, 39};
  std::vector<int> key_lengths;
  for (int t : positions) key_lengths.push_back(t + 1);
  auto scores = random_vector(batch * heads * key_stride);
  const auto key_term = random_vector(batch * heads * width);
  std::vector<float> buckets(batch * heads * width, 0.0f);
  auto d_scores = upload(scores), d_key_term = upload(key_term), d_buckets = upload(buckets),
       d_keys = upload(key_lengths), d_positions = upload(positions);
  BatchedRelativeSoftmaxArgs args{.scores = scores.data(), .batch = batch, .heads = heads,
                                  .queries = 1, .key_stride = key_stride,
                                  .key_lengths = key_lengths.data(),
                                  .query_positions = positions.data(),
                                  .max_relative_position = k, .key_term = key_term.data(),
                                  .bucket_sums = buckets.data()};
  relative_softmax_batched_cpu(args);
  args.scores = d_scores.as<float>();
  args.key_lengths = d_keys.as<int>();
  args.query_positions = d_positions.as<int>();
  args.key_term = d_key_term.as<float>();
  args.bucket_sums = d_buckets.as<float>();
  relative_softmax_batched_cuda(args, stream_->get());
  expect_near(download<float>(d_scores, scores.size()), scores, 1e-5);
  expect_near(download<float>(d_buckets, buckets.size()), buckets, 1e-5);
}

TEST_F(CudaOpsTest, TopKLogSoftmaxWithBlockedTokenAndTies) {
  const int rows = 6, vocab = 1000, k = 5;
  auto logits = random_vector(rows * vocab, 3.0f);
  logits[2 * vocab + 10] = logits[2 * vocab + 20] = 50.0f;  // a tie: the lower id comes first
  const std::vector<int> blocked = {-1, 3, 10, -1, 7, -1};
  std::vector<float> log_probs(rows * k);
  std::vector<int> ids(rows * k);
  auto d_logits = upload(logits), d_blocked = upload(blocked);
  DeviceBuffer d_log_probs(log_probs.size() * sizeof(float), stream_->get());
  DeviceBuffer d_ids(ids.size() * sizeof(int), stream_->get());
  TopKLogSoftmaxArgs args{.logits = logits.data(), .rows = rows, .vocab = vocab, .k = k,
                          .blocked_token = blocked.data(), .log_probs = log_probs.data(),
                          .ids = ids.data()};
  top_k_log_softmax_cpu(args);
  args.logits = d_logits.as<float>();
  args.blocked_token = d_blocked.as<int>();
  args.log_probs = d_log_probs.as<float>();
  args.ids = d_ids.as<int>();
  top_k_log_softmax_cuda(args, stream_->get());
  EXPECT_EQ(download<int>(d_ids, ids.size()), ids);
  expect_near(download<float>(d_log_probs, log_probs.size()), log_probs, 1e-5);
}

}  // namespace
}  // namespace rpt::kernels
