// The weights-file reader against good, corrupt, truncated and newer-version files, and model
// directories with missing or inconsistent parts.
#include "engine/weights_file.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine/errors.h"
#include "engine/model.h"
#include "engine/translator.h"
#include "engine/weight_tensors.h"
#include "kernels/int8_gemm.h"
#include "kernels/packed_sgemm.h"
#include "tests/support/source_dir.h"
#include "tests/support/weights_writer.h"

namespace rpt {
namespace {

using testing::NamedTensor;

class WeightsFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = testing::make_temp_directory("rpt-weights");
    path_ = directory_ + "/model.bin";
    bytes_ = testing::write_weights(path_, tensors_);
  }
  void TearDown() override { std::filesystem::remove_all(directory_); }

  void rewrite(const std::vector<unsigned char>& bytes, std::size_t size) {
    std::ofstream(path_, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(size));
  }

  // Loading must fail with ModelError whose message names the file and contains `fragment`.
  void expect_refused(const std::string& fragment) {
    try {
      WeightsFile file(path_);
      FAIL() << "loaded a bad file, expected: " << fragment;
    } catch (const ModelError& error) {
      EXPECT_NE(error.message().find(path_), std::string::npos) << error.message();
      EXPECT_NE(error.message().find(fragment), std::string::npos) << error.message();
    }
  }

  std::vector<NamedTensor> tensors_ = {
      {"a", "float32", {2, 3}, {1, 2, 3, 4, 5, 6}},
      {"b", "float16", {4}, {0.5f, -1.25f, 65504.0f, 0.0f}},
  };
  std::string directory_;
  std::string path_;
  std::vector<unsigned char> bytes_;
};

TEST_F(WeightsFileTest, ReadsTensorsInPlaceAndConvertsHalf) {
  WeightsFile file(path_);
  EXPECT_EQ(file.names(), (std::vector<std::string>{"a", "b"}));
  const Tensor a = file.get("a");
  EXPECT_EQ(a.shape(), (Shape{2, 3}));
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a.data<float>()) % 64, 0u);
  EXPECT_FLOAT_EQ(a.data<float>()[5], 6.0f);
  const Tensor b = file.get("b").to_float32();
  EXPECT_FLOAT_EQ(b.data<float>()[1], -1.25f);
  EXPECT_FLOAT_EQ(b.data<float>()[2], 65504.0f);
  EXPECT_THROW(file.get("missing"), ModelError);
}

TEST_F(WeightsFileTest, TensorsOutliveTheFileObject) {
  Tensor a;
  {
    WeightsFile file(path_);
    a = file.get("a");
  }
  EXPECT_FLOAT_EQ(a.data<float>()[0], 1.0f);  // the mapping is still alive
}

TEST_F(WeightsFileTest, ReleasedTensorsStayReadable) {
  // Pages over several tensors, so that a release drops pages other views still read.
  std::vector<float> big(3 * 4096);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(i) * 0.5f;
  tensors_.push_back({"c", "float32", {3, 4096}, big});
  tensors_.push_back({"d", "float16", {3}, {1.5f, 2.5f, -3.0f}});
  bytes_ = testing::write_weights(path_, tensors_);
  WeightsFile file(path_);
  const Tensor a = file.get("a");
  const Tensor c = file.get("c");
  for (const std::string& name : file.names()) file.release(name);
  EXPECT_FLOAT_EQ(a.data<float>()[5], 6.0f);
  for (std::size_t i = 0; i < big.size(); i += 997) {
    ASSERT_FLOAT_EQ(c.data<float>()[i], big[i]) << "element " << i;
  }
  EXPECT_FLOAT_EQ(file.get("d").to_float32().data<float>()[2], -3.0f);
  EXPECT_THROW(file.release("missing"), ModelError);
}

TEST_F(WeightsFileTest, RefusesTruncatedFile) {
  rewrite(bytes_, bytes_.size() - 3);
  expect_refused("truncated");
  rewrite(bytes_, 10);
  expect_refused("truncated");
}

TEST_F(WeightsFileTest, RefusesCorruptData) {
  auto corrupt = bytes_;
  corrupt[corrupt.size() - 2] ^= 0x40;
  rewrite(corrupt, corrupt.size());
  expect_refused("checksum mismatch in tensor b");
}

TEST_F(WeightsFileTest, RefusesCorruptHeader) {
  auto corrupt = bytes_;
  corrupt[30] ^= 0x01;
  rewrite(corrupt, corrupt.size());
  expect_refused("header checksum");
}

TEST_F(WeightsFileTest, RefusesBadMagic) {
  auto corrupt = bytes_;
  corrupt[0] = 'X';
  rewrite(corrupt, corrupt.size());
  expect_refused("not an rpt weights file");
}

TEST_F(WeightsFileTest, RefusesNewerVersion) {
  testing::write_weights(path_, tensors_, 2);
  expect_refused("newer than this build supports");
}

TEST_F(WeightsFileTest, RefusesMissingFile) {
  std::filesystem::remove(path_);
  expect_refused("cannot open");
}

TEST(ModelLoad, RefusesMissingDirectoryAndConfig) {
  EXPECT_THROW(Model::load("/nonexistent/rpt-model"), ModelError);
  const std::string directory = testing::make_temp_directory("rpt-empty-model");
  try {
    Model::load(directory);
    FAIL() << "loaded a directory without config.json";
  } catch (const ModelError& error) {
    EXPECT_NE(error.message().find("config.json"), std::string::npos);
  }
  std::filesystem::remove_all(directory);
}

// The file tensors for_each_weight lists for one member: the optional (a generator bias) when
// `file` has it, an int8 weight with its `_scale`.
std::vector<std::string> file_tensors(const WeightsFile&, const TableSpec& table) {
  if (!table.shares.empty()) return {};
  return {table.name};
}
std::vector<std::string> file_tensors(const WeightsFile&, const NormSpec& norm) {
  if (!norm.beta) return {norm.gamma_name()};
  return {norm.gamma_name(), norm.beta_name()};
}
std::vector<std::string> file_tensors(const WeightsFile& file, const LinearSpec& linear) {
  std::vector<std::string> names;
  for (std::size_t part = 0; part < linear.names.size(); ++part) {
    const std::string weight = linear.weight_name(part);
    if (linear.shares_weight.empty()) names.push_back(weight);
    if (file.contains(weight) && file.get(weight).dtype() == DataType::kInt8) {
      names.push_back(weight + "_scale");
    }
    if (linear.bias == Bias::kRequired ||
        (linear.bias == Bias::kIfPresent && file.contains(linear.bias_name(part)))) {
      names.push_back(linear.bias_name(part));
    }
  }
  return names;
}

// What for_each_weight lists is exactly what the converters wrote, in the bundled models (tied
// generator, shared embeddings) and the OpenNMT-py and T5 fixtures: no tensor of a file goes
// unread, none is listed twice.
TEST(ModelLoad, WeightTensorsAreExactlyTheFilesTensors) {
  for (const char* model : {"models/en-de", "models/en-fr", "tests/fixtures/shaw_k4/model",
                            "tests/fixtures/shaw_mixed/model", "tests/fixtures/sinusoidal/model",
                            "tests/fixtures/t5_bucket/model"}) {
    SCOPED_TRACE(model);
    const std::string directory = testing::source_dir() + "/" + model;
    const auto loaded = Model::load(directory, ModelLoadOptions{.cpu_layout = false});
    const WeightsFile file(directory + "/" + loaded->config().weights_file);
    std::vector<std::string> listed;
    for_each_weight(loaded->config(), loaded->source_vocabulary().size(),
                    loaded->target_vocabulary().size(), [&](const auto& spec) {
                      for (std::string& name : file_tensors(file, spec)) listed.push_back(name);
                    });
    const std::set<std::string> unique(listed.begin(), listed.end());
    EXPECT_EQ(unique.size(), listed.size());
    const std::vector<std::string> names = file.names();
    EXPECT_EQ(unique, std::set<std::string>(names.begin(), names.end()));
  }
}

// weights_bytes() counts what the weights hold: in float32, unpacked, each of the file's
// elements once (fused projections are not counted again as their parts).
TEST(ModelLoad, WeightsBytesAreTheFilesElementsInFloat32) {
  for (const char* model : {"models/en-de", "tests/fixtures/shaw_k4/model"}) {
    const std::string directory = testing::source_dir() + "/" + model;
    const auto loaded = Model::load(directory, ModelLoadOptions{.cpu_layout = false});
    const WeightsFile file(directory + "/" + loaded->config().weights_file);
    std::size_t elements = 0;
    for (const std::string& name : file.names()) {
      elements += static_cast<std::size_t>(file.get(name).numel());
    }
    EXPECT_EQ(loaded->weights_bytes(), elements * sizeof(float)) << model;
  }
}

// A file tensor in float32 as the loader reads it: int8 weights times their row scales.
std::vector<float> float32_of(const WeightsFile& file, const std::string& name) {
  const Tensor stored = file.get(name);
  if (stored.dtype() != DataType::kInt8) {
    const Tensor converted = stored.to_float32();
    return {converted.data<float>(), converted.data<float>() + converted.numel()};
  }
  const float* scales = file.get(name + "_scale").data<float>();
  std::vector<float> out(static_cast<std::size_t>(stored.numel()));
  const std::int64_t cols = stored.dim(1);
  for (std::int64_t i = 0; i < stored.numel(); ++i) {
    out[static_cast<std::size_t>(i)] =
        scales[i / cols] * static_cast<float>(stored.data<std::int8_t>()[i]);
  }
  return out;
}

// A fused member (Q/K/V; every decoder layer's memory keys and values) is filled part by part in
// its layout as the file gives the parts (engine/model.cc): in float32 its weight and bias are the
// parts stacked, in int8 the stack quantized, bit for bit (each part is quantized as it is read;
// rows are quantized alone), from every file dtype.
TEST(ModelLoad, FusedProjectionsAreTheirPartsStacked) {
  for (const char* dtype : {"float32", "float16", "int8"}) {
    const std::string directory = testing::make_temp_directory("rpt-fused");
    testing::SyntheticModelOptions options = testing::relative_model_options(
        {.encoder_layers = 1, .decoder_layers = 3, .d_model = 16, .heads = 2, .d_ff = 32}, 2);
    options.config.architecture.qkv_bias = true;
    options.dtype = dtype;
    testing::write_synthetic_model(directory, options);
    const auto plain = Model::load(directory, ModelLoadOptions{.cpu_layout = false});
    const auto int8 = Model::load(directory, ModelLoadOptions{.int8 = true});
    const WeightsFile file(directory + "/model.bin");
    const auto expect_stacked = [&](const std::vector<std::string>& parts,
                                    const LinearWeights& fused, const LinearWeights& quantized) {
      std::vector<float> weight, bias;
      for (const std::string& part : parts) {
        for (const float value : float32_of(file, part + ".weight")) weight.push_back(value);
        for (const float value : float32_of(file, part + ".bias")) bias.push_back(value);
      }
      const int rows = static_cast<int>(bias.size()), cols = fused.in_features();
      ASSERT_EQ(fused.out_features(), rows) << parts.front();
      EXPECT_EQ(
          std::memcmp(fused.weight.data<float>(), weight.data(), sizeof(float) * weight.size()), 0)
          << dtype << " " << parts.front();
      EXPECT_EQ(std::memcmp(fused.bias.data<float>(), bias.data(), sizeof(float) * bias.size()), 0)
          << dtype << " " << parts.front();
      const auto expected = kernels::Int8Weights::quantize(weight.data(), rows, cols);
      ASSERT_NE(quantized.int8, nullptr);
      EXPECT_EQ(quantized.int8->unpacked_values(), expected->unpacked_values())
          << dtype << " " << parts.front();
      EXPECT_EQ(std::memcmp(quantized.int8->scales(), expected->scales(), sizeof(float) * rows), 0)
          << dtype << " " << parts.front();
      EXPECT_EQ(std::memcmp(quantized.bias.data<float>(), bias.data(), sizeof(float) * rows), 0);
    };
    std::vector<std::string> memory;
    for (int layer = 0; layer < 3; ++layer) {
      const std::string cross = "decoder.layer_" + std::to_string(layer) + ".cross_attention.";
      memory.push_back(cross + "key");
      memory.push_back(cross + "value");
    }
    expect_stacked(memory, plain->memory_key_value(), int8->memory_key_value());
    const std::string self = "decoder.layer_1.self_attention.";
    expect_stacked({self + "query", self + "key", self + "value"},
                   plain->decoder_layers()[1].self_attention.qkv,
                   int8->decoder_layers()[1].self_attention.qkv);
    std::filesystem::remove_all(directory);
  }
}

// Packed float32 weights take about the plain weights' memory: oneDNN's layout pads, but the
// padding is never written (kernels/cpu/onednn_cpu.h). The CPU layout's count is the plain one
// with the shared embedding table in the file's float16 instead of float32, the tied generator's
// packed copy of it and a few pages a matrix.
TEST(ModelLoad, PackedWeightsTakeAboutThePlainBytes) {
  if (!kernels::float32_linear_packed())
    GTEST_SKIP() << "float32 linear layers are not packed here";
  const std::string directory = testing::source_dir() + "/models/en-de";
  const auto plain = Model::load(directory, ModelLoadOptions{.cpu_layout = false});
  const auto packed = Model::load(directory);
  const LinearWeights& generator = packed->generator();
  ASSERT_NE(generator.packed, nullptr);
  const std::size_t generator_bytes =
      sizeof(float) * generator.out_features() * static_cast<std::size_t>(generator.in_features());
  ASSERT_EQ(packed->decoder_embeddings().dtype(), DataType::kFloat16);
  const std::size_t expected = plain->weights_bytes() - generator_bytes / 2 + generator_bytes;
  std::size_t matrices = 2;  // memory keys and values, generator
  matrices += 4 * packed->encoder_layers().size() + 5 * packed->decoder_layers().size();
  EXPECT_GE(packed->weights_bytes(), expected);
  EXPECT_LE(packed->weights_bytes(), expected + matrices * 8 * 4096);
  std::printf("packed %zu bytes, expected at least %zu\n", packed->weights_bytes(), expected);
}

// For the CPU engine an embedding table stays as the file holds it (float16 here), its rows
// converted exactly as they are looked up: a float16 file translates as its float32 copy does
// (whose tables are float32), bit for bit, scores included, in float32 and int8, with a tied
// generator (laid out from the float16 table) and without.
TEST(ModelLoad, SixteenBitTablesTranslateAsTheirFloat32Copy) {
  for (const bool tied : {true, false}) {
    SCOPED_TRACE(tied ? "tied generator, shared embeddings" : "own generator and embeddings");
    const std::string half = testing::make_temp_directory("rpt-half");
    const std::string full = testing::make_temp_directory("rpt-full");
    testing::SyntheticModelOptions options = testing::relative_model_options(
        {.encoder_layers = 2, .decoder_layers = 2, .d_model = 32, .heads = 4, .d_ff = 64}, 4);
    options.vocabulary_size = 60;
    options.config.architecture.tied_generator = tied;
    options.config.architecture.shared_embeddings = tied;
    options.dtype = "float16";
    testing::write_synthetic_model(half, options);
    for (const auto& entry : std::filesystem::directory_iterator(half)) {
      if (entry.path().filename() != "model.bin") std::filesystem::copy(entry.path(), full);
    }
    const WeightsFile file(half + "/model.bin");
    std::vector<NamedTensor> tensors;
    for (const std::string& name : file.names()) {
      tensors.push_back(
          {.name = name, .shape = file.get(name).shape(), .values = float32_of(file, name)});
    }
    testing::write_weights(full + "/model.bin", tensors);
    const std::vector<std::string> sentences = {"w5 w6 w7", "w10 w11 w12 w13 w14 w15", "w30",
                                                "w9 w8 w7 w6 w5 w4 w33 w34 w35"};
    DecodingOptions decoding;
    decoding.beam_size = 4;
    decoding.n_best = 2;
    decoding.max_length = 20;
    for (const bool int8 : {false, true}) {
      const auto from_half = Model::load(half, ModelLoadOptions{.int8 = int8});
      const auto from_full = Model::load(full, ModelLoadOptions{.int8 = int8});
      // A tied generator read in float32 as it is (not packed: AVX2 CPUs) reads its table so.
      const bool table_in_float32 = tied && !int8 && !kernels::float32_linear_packed();
      EXPECT_EQ(from_half->decoder_embeddings().dtype(),
                table_in_float32 ? DataType::kFloat32 : DataType::kFloat16);
      EXPECT_EQ(from_full->decoder_embeddings().dtype(), DataType::kFloat32);
      const ComputeOptions engine{.precision = int8 ? kernels::Precision::kInt8
                                                    : kernels::Precision::kFloat32};
      const auto got = Translator(Engine::create(from_half, engine)).translate(sentences, decoding);
      const auto expected =
          Translator(Engine::create(from_full, engine)).translate(sentences, decoding);
      for (std::size_t i = 0; i < sentences.size(); ++i) {
        ASSERT_EQ(got[i].hypotheses.size(), expected[i].hypotheses.size());
        for (std::size_t h = 0; h < got[i].hypotheses.size(); ++h) {
          EXPECT_EQ(got[i].hypotheses[h].ids, expected[i].hypotheses[h].ids) << int8 << " " << i;
          EXPECT_EQ(got[i].hypotheses[h].score, expected[i].hypotheses[h].score)
              << int8 << " " << i;
        }
      }
    }
    std::filesystem::remove_all(half);
    std::filesystem::remove_all(full);
  }
}

// What a GPU engine keeps of its model once the weights are on the device.
TEST(ModelLoad, ACopyWithoutWeightsKeepsTheRestAndMakesNoEngine) {
  const auto loaded =
      Model::load(testing::source_dir() + "/models/en-de", ModelLoadOptions{.cpu_layout = false});
  const auto bare = loaded->without_weights();
  EXPECT_TRUE(loaded->has_weights());
  EXPECT_FALSE(bare->has_weights());
  EXPECT_THROW(bare->weights(), InvalidArgument);
  EXPECT_FALSE(bare->decoder_embeddings().defined());
  EXPECT_EQ(bare->source_vocabulary().size(), loaded->source_vocabulary().size());
  EXPECT_EQ(bare->source_tokenizer().encode("Open the file."),
            loaded->source_tokenizer().encode("Open the file."));
  EXPECT_EQ(bare->eos_id(), loaded->eos_id());
  EXPECT_EQ(bare->config().architecture.d_model, loaded->config().architecture.d_model);
  EXPECT_THROW(Engine::create(bare), InvalidArgument);
  EXPECT_TRUE(loaded->decoder_embeddings().defined()) << "the original keeps its weights";
  EXPECT_NO_THROW(Engine::create(loaded));
}

TEST(ModelLoad, RefusesShapeMismatchNamingTheTensor) {
  const std::string directory = testing::make_temp_directory("rpt-bad-shape");
  testing::write_synthetic_model(
      directory,
      testing::relative_model_options(
          {.encoder_layers = 1, .decoder_layers = 1, .d_model = 8, .heads = 2, .d_ff = 16}, 2));
  EXPECT_NO_THROW(Model::load(directory));
  // Claim a larger d_ff than the weights have.
  std::string text;
  {
    std::ifstream in(directory + "/config.json");
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  const auto at = text.find("\"d_ff\": 16");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 10, "\"d_ff\": 32");
  std::ofstream(directory + "/config.json", std::ios::trunc) << text;
  try {
    Model::load(directory);
    FAIL() << "loaded inconsistent shapes";
  } catch (const ModelError& error) {
    EXPECT_NE(error.message().find("ffn.inner.weight"), std::string::npos) << error.message();
  }
  std::filesystem::remove_all(directory);
}

TEST(ModelLoad, RefusesNewerConfigVersion) {
  EXPECT_THROW(ModelConfig::parse(R"({"format": "rpt-model", "format_version": 99})", "x"),
               ModelError);
  EXPECT_THROW(ModelConfig::parse("{not json", "x"), ModelError);
}

// max_segment_tokens (optional): the longest segment the model translates whole, positive.
TEST(ModelLoad, ReadsMaxSegmentTokens) {
  std::string text;
  {
    std::ifstream in(testing::source_dir() + "/tests/fixtures/t5_bucket/model/config.json");
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  EXPECT_EQ(ModelConfig::parse(text, "t5_bucket").max_segment_tokens, 0);  // absent: no limit
  const auto with = [&text](const std::string& value) {
    return "{\"max_segment_tokens\": " + value + "," + text.substr(text.find('{') + 1);
  };
  EXPECT_EQ(ModelConfig::parse(with("24"), "t5_bucket").max_segment_tokens, 24);
  EXPECT_THROW(ModelConfig::parse(with("0"), "t5_bucket"), ModelError);
  EXPECT_THROW(ModelConfig::parse(with("-3"), "t5_bucket"), ModelError);
}

// T5 buckets whose max_distance does not pass the decoder's exact range (buckets / 2), or fewer
// than 4 buckets, would give negative buckets (an out-of-range table read) or divide by zero:
// refused at load.
TEST(ModelLoad, RefusesT5BucketsWithoutRoomForTheLogarithmicBins) {
  std::string text;
  {
    std::ifstream in(testing::source_dir() + "/tests/fixtures/t5_bucket/model/config.json");
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  EXPECT_NO_THROW(ModelConfig::parse(text, "t5_bucket"));
  const std::string good = "\"max_distance\": 20";
  const auto at = text.find(good);
  ASSERT_NE(at, std::string::npos);
  for (const char* distance : {"16", "3"}) {
    std::string bad = text;
    bad.replace(at, good.size(), std::string("\"max_distance\": ") + distance);
    try {
      ModelConfig::parse(bad, "t5_bucket");
      FAIL() << "accepted max_distance " << distance << " with 32 buckets";
    } catch (const ModelError& error) {
      EXPECT_NE(error.message().find("max_distance > buckets / 2"), std::string::npos)
          << error.message();
    }
  }
  // Two or three buckets leave the encoder no exact bucket (a division by zero).
  std::string few = text;
  const std::string buckets = "\"buckets\": 32";
  const auto buckets_at = few.find(buckets);
  ASSERT_NE(buckets_at, std::string::npos);
  few.replace(buckets_at, buckets.size(), "\"buckets\": 3");
  EXPECT_THROW(ModelConfig::parse(few, "t5_bucket"), ModelError);
}

// architecture.head_dim sets the attention width apart from d_model (T5 v1.1-small, mT5,
// MADLAD); numbers out of their type's range are refused by name, never cast.
TEST(ModelLoad, ReadsHeadDimAndRefusesOutOfRangeNumbers) {
  std::string text;
  {
    std::ifstream in(testing::source_dir() + "/tests/fixtures/t5_bucket/model/config.json");
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  const auto with = [&](const std::string& fields) {
    std::string changed = text;
    const auto at = changed.find("\"architecture\": {");
    EXPECT_NE(at, std::string::npos);
    changed.insert(at + std::string("\"architecture\": {").size(), fields);
    return changed;
  };
  const ModelConfig plain = ModelConfig::parse(text, "t5_bucket");
  EXPECT_EQ(plain.architecture.attention_dim(), plain.architecture.d_model);
  EXPECT_TRUE(plain.architecture.scale_attention);
  const ModelConfig wide =
      ModelConfig::parse(with(R"("head_dim": 40, "scale_attention": false, )"), "wide");
  EXPECT_EQ(wide.architecture.head_dim(), 40);
  EXPECT_EQ(wide.architecture.attention_dim(), 40 * wide.architecture.heads);
  EXPECT_FALSE(wide.architecture.scale_attention);
  for (const std::string& bad :
       {std::string(R"("head_dim": 0, )"), std::string(R"("head_dim": 65536, )"),
        std::string(R"("head_dim": 1e30, )"), std::string(R"("head_dim": 4294967296, )"),
        std::string(R"("scale_attention": 3, )"), std::string(R"("head_dim": "64", )")}) {
    try {
      ModelConfig::parse(with(bad), "bad");
      FAIL() << "accepted " << bad;
    } catch (const ModelError& error) {
      EXPECT_NE(error.message().find("bad"), std::string::npos) << error.message();
    }
  }
  std::string huge_eps = text;
  const std::string eps = "\"norm_eps\": 1e-06";
  ASSERT_NE(huge_eps.find(eps), std::string::npos);
  huge_eps.replace(huge_eps.find(eps), eps.size(), "\"norm_eps\": 1e300");
  EXPECT_THROW(ModelConfig::parse(huge_eps, "bad"), ModelError);
}

}  // namespace
}  // namespace rpt
