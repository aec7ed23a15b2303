// CPU int8 compute end to end: a sentence's int8 translation does not depend on its batch
// (integer sums are exact, activations are quantized per row and the float32 GEMMs are
// row-invariant), int8 stays close to float32 on a model whose distributions are peaked, packed
// and plain weights translate alike, and the refusals of Engine::create.
#include <gtest/gtest.h>

#include <filesystem>

#include "engine/errors.h"
#include "engine/translator.h"
#include "tests/support/scoped_environment.h"
#include "tests/support/weights_writer.h"

namespace rpt {
namespace {

class Int8TranslationTest : public ::testing::Test {
 protected:
  static testing::SyntheticModelOptions model_options() {
    testing::SyntheticModelOptions options;
    options.vocabulary_size = 60;
    ModelConfig& c = options.config;
    c.architecture = {
        .encoder_layers = 2, .decoder_layers = 2, .d_model = 32, .heads = 4, .d_ff = 64};
    c.position.type = PositionType::kRelative;
    c.position.encoder_max_relative_position = 4;
    c.position.decoder_max_relative_position = 4;
    return options;
  }
  static void SetUpTestSuite() {
    directory_ = testing::make_temp_directory("rpt-int8");
    testing::write_synthetic_model(directory_, model_options());
    float32_ = Model::load(directory_);
    int8_ = Model::load(directory_, {.int8 = true});
  }
  static void TearDownTestSuite() {
    float32_.reset();
    int8_.reset();
    std::filesystem::remove_all(directory_);
  }

  static std::vector<std::string> sentences() {
    return {"w5 w6 w7", "w10 w11 w12 w13 w14 w15 w16 w17 w18 w19 w20 w21 w22",
            "w30",      "w40 w41 w42 w43 w44 w45",
            "w50 w51",  "w9 w8 w7 w6 w5 w4 w33 w34 w35"};
  }

  static inline std::string directory_;
  static inline std::shared_ptr<const Model> float32_;
  static inline std::shared_ptr<const Model> int8_;
};

TEST_F(Int8TranslationTest, WeightsAreQuantizedAndSmaller) {
  EXPECT_TRUE(int8_->int8());
  EXPECT_FALSE(float32_->int8());
  const LinearWeights& inner = int8_->encoder_layers()[0].ffn.inner;
  ASSERT_NE(inner.int8, nullptr);
  EXPECT_FALSE(inner.weight.defined()) << "no float32 copy beside the int8 weights";
  EXPECT_EQ(inner.out_features(), 64);
  EXPECT_EQ(inner.in_features(), 32);
  EXPECT_NE(int8_->generator().int8, nullptr);
  EXPECT_LT(int8_->weights_bytes(), float32_->weights_bytes());
}

TEST_F(Int8TranslationTest, SentenceAloneEqualsSentenceInBatch) {
  const Translator translator(Engine::create(int8_, {.precision = kernels::Precision::kInt8}));
  for (const int beam_size : {1, 4}) {
    DecodingOptions options;
    options.beam_size = beam_size;
    options.n_best = beam_size > 1 ? 2 : 1;
    options.max_length = 24;
    const auto batched = translator.translate(sentences(), options);
    ASSERT_EQ(batched.size(), sentences().size());
    for (std::size_t i = 0; i < sentences().size(); ++i) {
      const auto alone = translator.translate({sentences()[i]}, options);
      ASSERT_EQ(alone[0].hypotheses.size(), batched[i].hypotheses.size());
      for (std::size_t h = 0; h < alone[0].hypotheses.size(); ++h) {
        EXPECT_EQ(alone[0].hypotheses[h].ids, batched[i].hypotheses[h].ids) << i;
        // Bitwise: the float32 parts (attention) are row-invariant too (kernels/gemm.h).
        EXPECT_EQ(alone[0].hypotheses[h].score, batched[i].hypotheses[h].score) << i;
      }
    }
  }
}

// The first decoder step's scores in int8 track float32's: the best first token agrees for most
// sentences and its log-probability is close (a synthetic model's distributions are flat, so the
// bar is on the scores, not on whole translations; the bundled models' test checks those).
TEST_F(Int8TranslationTest, FirstTokenScoresTrackFloat32) {
  const Translator reference(Engine::create(float32_));
  const Translator quantized(Engine::create(int8_, {.precision = kernels::Precision::kInt8}));
  DecodingOptions options;
  options.beam_size = 1;
  options.max_length = 1;
  options.length_penalty = 0.0f;
  const auto expected = reference.translate(sentences(), options);
  const auto got = quantized.translate(sentences(), options);
  int agree = 0;
  for (std::size_t i = 0; i < sentences().size(); ++i) {
    const auto& a = expected[i].hypotheses.at(0);
    const auto& b = got[i].hypotheses.at(0);
    agree += a.ids == b.ids;
    EXPECT_NEAR(a.score, b.score, 0.1) << i;
  }
  EXPECT_GE(agree, 4) << "of " << sentences().size();
}

// A model file written with int8 linear weights (convert_onmt.py --dtype int8) is smaller, and
// computes in int8 as its float32 original does: quantizing the dequantized weights again at
// load gives back the stored integers. float32 compute reads it too (dequantized).
TEST_F(Int8TranslationTest, Int8FilesTranslateAsTheFloat32FileInInt8) {
  const std::string directory = testing::make_temp_directory("rpt-int8-file");
  testing::SyntheticModelOptions options = model_options();
  options.dtype = "int8";
  testing::write_synthetic_model(directory, options);
  EXPECT_LT(std::filesystem::file_size(directory + "/model.bin"),
            std::filesystem::file_size(directory_ + "/model.bin") / 2);
  const auto stored = Model::load(directory, {.int8 = true});
  EXPECT_EQ(stored->stored_dtype(), "int8");
  const LinearWeights& inner = stored->decoder_layers()[1].ffn.inner;
  const LinearWeights& original = int8_->decoder_layers()[1].ffn.inner;
  EXPECT_EQ(inner.int8->unpacked_values(), original.int8->unpacked_values());
  for (int r = 0; r < inner.out_features(); ++r) {
    EXPECT_NEAR(inner.int8->scales()[r], original.int8->scales()[r],
                1e-6f * original.int8->scales()[r]);
  }

  const Translator from_file(Engine::create(stored, {.precision = kernels::Precision::kInt8}));
  const Translator from_float32(Engine::create(int8_, {.precision = kernels::Precision::kInt8}));
  DecodingOptions options4;
  options4.beam_size = 4;
  options4.max_length = 24;
  const auto expected = from_float32.translate(sentences(), options4);
  const auto got = from_file.translate(sentences(), options4);
  for (std::size_t i = 0; i < sentences().size(); ++i) {
    EXPECT_EQ(got[i].hypotheses.at(0).ids, expected[i].hypotheses.at(0).ids) << i;
    EXPECT_NEAR(got[i].hypotheses.at(0).score, expected[i].hypotheses.at(0).score, 1e-4) << i;
  }
  const Translator dequantized(Engine::create(Model::load(directory)));
  EXPECT_EQ(dequantized.translate(sentences(), options4).size(), sentences().size());
  std::filesystem::remove_all(directory);
}

// oneDNN's packed products (kernels/int8_gemm.h) give the plain weights' integer sums: the same
// translations, scores bit for bit. This model's matrices are small enough to stay plain unless
// RPT_INT8_PACKED=1 asks.
TEST_F(Int8TranslationTest, PackedWeightsTranslateAsPlainOnes) {
  const auto packed = [] {
    const testing::ScopedEnvironmentVariable packing("RPT_INT8_PACKED", "1");
    return Model::load(directory_, {.int8 = true});
  }();
  if (!packed->decoder_layers()[0].ffn.inner.int8->packed()) {
    GTEST_SKIP() << "this oneDNN has no packed int8 GEMM";
  }
  ASSERT_FALSE(int8_->decoder_layers()[0].ffn.inner.int8->packed());
  DecodingOptions options;
  options.beam_size = 4;
  options.max_length = 24;
  const auto expected = Translator(Engine::create(int8_, {.precision = kernels::Precision::kInt8}))
                            .translate(sentences(), options);
  const auto got = Translator(Engine::create(packed, {.precision = kernels::Precision::kInt8}))
                       .translate(sentences(), options);
  for (std::size_t i = 0; i < sentences().size(); ++i) {
    EXPECT_EQ(got[i].hypotheses.at(0).ids, expected[i].hypotheses.at(0).ids) << i;
    EXPECT_EQ(got[i].hypotheses.at(0).score, expected[i].hypotheses.at(0).score) << i;
  }
}

TEST_F(Int8TranslationTest, EngineRefusesMismatchedModelsAndDevices) {
  EXPECT_THROW(Engine::create(float32_, {.precision = kernels::Precision::kInt8}), InvalidArgument)
      << "int8 compute needs a model loaded with int8 weights";
  EXPECT_THROW(Engine::create(int8_), InvalidArgument) << "float32 compute on int8 weights";
  EXPECT_THROW(
      Engine::create(int8_, {.device = Device::kCuda, .precision = kernels::Precision::kInt8}),
      InvalidArgument)
      << "no CUDA int8 path";
  EXPECT_EQ(parse_precision("int8"), kernels::Precision::kInt8);
}

}  // namespace
}  // namespace rpt
