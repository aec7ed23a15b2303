// Loading in parallel (engine/model.cc converts, quantizes and packs over the CPU threads) gives
// the weights a serial load gives, bit for bit: plain float32 and int8 rows on 1 and 3 threads,
// and packed float32 weights equal to packing the plain ones.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "engine/errors.h"
#include "engine/model.h"
#include "engine/weights_file.h"
#include "kernels/int8_gemm.h"
#include "kernels/packed_sgemm.h"
#include "kernels/parallel.h"
#include "tests/support/weights_writer.h"

namespace rpt {
namespace {

// Every linear member of a model, the generator and the memory keys and values included.
void for_each_linear(const Model& model, const std::function<void(const LinearWeights&)>& visit) {
  for (const EncoderLayerWeights& layer : model.encoder_layers()) {
    visit(layer.self_attention.qkv);
    visit(layer.self_attention.output);
    visit(layer.ffn.inner);
    visit(layer.ffn.outer);
  }
  for (const DecoderLayerWeights& layer : model.decoder_layers()) {
    visit(layer.self_attention.qkv);
    visit(layer.self_attention.output);
    visit(layer.cross_attention.query);
    visit(layer.cross_attention.output);
    visit(layer.ffn.inner);
    visit(layer.ffn.outer);
  }
  visit(model.memory_key_value());
  visit(model.generator());
}

std::vector<const LinearWeights*> linears(const Model& model) {
  std::vector<const LinearWeights*> out;
  for_each_linear(model, [&](const LinearWeights& layer) { out.push_back(&layer); });
  return out;
}

bool same_bytes(const void* a, const void* b, std::size_t bytes) {
  return std::memcmp(a, b, bytes) == 0;
}

class ParallelLoad : public ::testing::Test {
 protected:
  // A float16 file whose matrices are large enough to be split over 3 threads: d_ff 4096 rows of
  // 128 (conversion, and quantization by 1 MiB of float32 rows) and output features past 3 packed
  // blocks.
  void SetUp() override {
    directory_ = testing::make_temp_directory("rpt-parallel-load");
    testing::SyntheticModelOptions options = testing::relative_model_options(
        {.encoder_layers = 1, .decoder_layers = 2, .d_model = 128, .heads = 4, .d_ff = 4096}, 4);
    options.dtype = "float16";
    options.vocabulary_size = 900;
    testing::write_synthetic_model(directory_, options);
  }
  void TearDown() override {
    kernels::set_cpu_threads(threads_before_);
    std::filesystem::remove_all(directory_);
  }

  std::shared_ptr<const Model> load(int threads, const ModelLoadOptions& options) const {
    kernels::set_cpu_threads(threads);
    return Model::load(directory_, options);
  }

  std::string directory_;
  int threads_before_ = kernels::cpu_threads();
};

TEST_F(ParallelLoad, Float32WeightsAreTheSameOnAnyThreadCount) {
  const auto serial_model = load(1, {.cpu_layout = false});
  const auto parallel_model = load(3, {.cpu_layout = false});
  const auto serial = linears(*serial_model);
  const auto parallel = linears(*parallel_model);
  ASSERT_EQ(serial.size(), parallel.size());
  for (std::size_t i = 0; i < serial.size(); ++i) {
    const Tensor& a = serial[i]->weight;
    ASSERT_EQ(a.shape(), parallel[i]->weight.shape()) << i;
    EXPECT_TRUE(same_bytes(a.data<float>(), parallel[i]->weight.data<float>(), a.nbytes())) << i;
  }
}

TEST_F(ParallelLoad, Int8RowsAreTheSameOnAnyThreadCount) {
  const auto serial_model = load(1, {.int8 = true});
  const auto parallel_model = load(3, {.int8 = true});
  const auto serial = linears(*serial_model);
  const auto parallel = linears(*parallel_model);
  for (std::size_t i = 0; i < serial.size(); ++i) {
    const kernels::Int8Weights& a = *serial[i]->int8;
    const kernels::Int8Weights& b = *parallel[i]->int8;
    ASSERT_EQ(a.rows(), b.rows()) << i;
    EXPECT_EQ(a.unpacked_values(), b.unpacked_values()) << i;
    EXPECT_TRUE(same_bytes(a.scales(), b.scales(), sizeof(float) * a.rows())) << i;
    EXPECT_TRUE(same_bytes(a.row_sums(), b.row_sums(), sizeof(std::int32_t) * a.rows())) << i;
  }
}

// Packed from the loader's reused transient, blocks packed in parallel: the products of packing
// the plain weights (the same thread count, so the same blocks), bit for bit.
TEST_F(ParallelLoad, PackedWeightsArePackedPlainWeights) {
  if (!kernels::float32_linear_packed()) {
    GTEST_SKIP() << "float32 linear layers are not packed here";
  }
  const auto plain_model = load(3, {.cpu_layout = false});
  const auto packed_model = load(3, {});
  const auto plain = linears(*plain_model);
  const auto packed = linears(*packed_model);
  std::mt19937 random(5);
  std::normal_distribution<float> normal;
  for (std::size_t i = 0; i < plain.size(); ++i) {
    const Tensor& weight = plain[i]->weight;
    const int rows = static_cast<int>(weight.dim(0)), cols = static_cast<int>(weight.dim(1));
    ASSERT_NE(packed[i]->packed, nullptr) << i;
    const auto expected = kernels::PackedFloat32Weights::pack(weight.data<float>(), rows, cols);
    constexpr int kInputRows = 5;
    std::vector<float> input(static_cast<std::size_t>(kInputRows) * cols);
    for (float& value : input) value = normal(random);
    std::vector<float> got(static_cast<std::size_t>(kInputRows) * rows);
    std::vector<float> want(got.size());
    for (auto [weights, output] :
         {std::pair{packed[i]->packed.get(), got.data()}, std::pair{expected.get(), want.data()}}) {
      kernels::packed_linear_cpu({.input = input.data(),
                                  .input_stride = cols,
                                  .rows = kInputRows,
                                  .weights = weights,
                                  .output = output,
                                  .output_stride = rows});
    }
    EXPECT_TRUE(same_bytes(got.data(), want.data(), sizeof(float) * got.size())) << i;
  }
}

// A weight int8 cannot hold is refused naming the file and the first row holding one, though
// the rows are quantized by two threads (rows 0-2047 and 2048-4095).
TEST_F(ParallelLoad, ANonFiniteWeightNamesTheFirstRowHoldingOne) {
  const std::string path = directory_ + "/model.bin";
  std::vector<testing::NamedTensor> tensors;
  {
    const WeightsFile file(path);
    for (const std::string& name : file.names()) {
      const Tensor stored = file.get(name);
      const Tensor values = stored.to_float32();
      tensors.push_back({.name = name,
                         .dtype = std::string(dtype_name(stored.dtype())),
                         .shape = stored.shape(),
                         .values = {values.data<float>(), values.data<float>() + values.numel()}});
      if (name == "encoder.layer_0.ffn.inner.weight") {
        tensors.back().values[3000 * 128 + 5] = std::numeric_limits<float>::infinity();
        tensors.back().values[1500 * 128 + 7] = std::numeric_limits<float>::quiet_NaN();
      }
    }
  }
  testing::write_weights(path, tensors);
  try {
    load(3, {.int8 = true});
    FAIL() << "quantized a NaN";
  } catch (const ModelError& error) {
    EXPECT_NE(error.message().find(path), std::string::npos) << error.message();
    EXPECT_NE(error.message().find("weight row 1500 holds nan"), std::string::npos)
        << error.message();
  }
}

}  // namespace
}  // namespace rpt
