// The engine against the direct double-precision reference (tests/support) on synthetic models
// covering every configuration the format allows: Shaw with shared or separate tables, k per
// stack, T5 buckets, sinusoidal, no positions, pre- and post-norm, biases, activations, fp16,
// and the T5 family's RMS norm, gated feed-forward, unscaled scores and heads * head_dim != d_model
// (tools/convert_hf_t5.py).
#include <gtest/gtest.h>

#include <filesystem>

#include "engine/model.h"
#include "tests/support/forced_decoding.h"
#include "tests/support/reference_transformer.h"
#include "tests/support/weights_writer.h"

namespace rpt {
namespace {

struct Variant {
  const char* name;
  ModelConfig config;
  std::string dtype = "float32";
};

void PrintTo(const Variant& variant, std::ostream* out) { *out << variant.name; }

ModelConfig base_config() {
  ModelConfig c;
  c.architecture = {
      .encoder_layers = 2, .decoder_layers = 2, .d_model = 12, .heads = 3, .d_ff = 20};
  c.position.type = PositionType::kRelative;
  c.position.encoder_max_relative_position = 3;
  c.position.decoder_max_relative_position = 2;
  return c;
}

std::vector<Variant> variants() {
  std::vector<Variant> out;
  out.push_back({"shaw_shared_pre", base_config()});
  {
    ModelConfig c = base_config();
    c.position.separate_relative_values = true;
    c.architecture.norm_placement = NormPlacement::kPost;
    c.architecture.activation = Activation::kGelu;
    c.architecture.qkv_bias = true;
    out.push_back({"shaw_separate_post_gelu_bias", c});
  }
  {
    ModelConfig c = base_config();
    c.position.encoder_max_relative_position = 0;  // decoder-only relative positions
    c.architecture.ffn_bias = false;
    c.architecture.activation = Activation::kSilu;
    out.push_back({"shaw_decoder_only_silu", c});
  }
  {
    ModelConfig c = base_config();
    c.position.type = PositionType::kT5Bucket;
    c.position.buckets = 8;
    c.position.max_distance = 6;
    out.push_back({"t5_bucket", c});
  }
  {
    ModelConfig c = base_config();
    c.position.type = PositionType::kSinusoidal;
    c.position.sinusoidal = true;
    c.architecture.embedding_scale = true;
    out.push_back({"sinusoidal", c});
  }
  {
    ModelConfig c = base_config();
    c.position.type = PositionType::kNone;
    out.push_back({"no_position", c});
  }
  {
    ModelConfig c = base_config();
    c.position.sinusoidal = true;  // relative and absolute together
    out.push_back({"shaw_plus_sinusoidal", c});
  }
  {
    ModelConfig c = base_config();  // T5 v1.0: RMS norm, no biases, ReLU
    c.position.type = PositionType::kT5Bucket;
    c.position.buckets = 8;
    c.position.max_distance = 6;
    c.architecture.norm = NormType::kRmsNorm;
    c.architecture.ffn_bias = false;
    out.push_back({"t5_rms_norm", c});
    c.architecture.gated_ffn = true;  // T5 v1.1 / Flan: act(gate x) * (inner x), tanh GELU
    c.architecture.activation = Activation::kGeluTanh;
    out.push_back({"t5_gated_gelu_tanh", c});
    c.architecture.norm_placement = NormPlacement::kPost;  // the variants compose
    c.architecture.activation = Activation::kRelu;
    out.push_back({"t5_gated_relu_post", c});
    // T5 v1.1-small / mT5 / MADLAD: heads * head_dim != d_model, scores read unscaled.
    c.architecture.norm_placement = NormPlacement::kPre;
    c.architecture.activation = Activation::kGeluTanh;
    c.architecture.head_size = 6;  // 3 heads of 6: attention 18 wide in d_model 12
    c.architecture.scale_attention = false;
    out.push_back({"t5_wide_heads_unscaled", c});
  }
  {
    ModelConfig c = base_config();  // narrower attention than the model, with relative tables
    c.architecture.head_size = 2;
    c.position.separate_relative_values = true;
    out.push_back({"shaw_narrow_heads", c});
  }
  out.push_back({"shaw_float16", base_config(), "float16"});
  return out;
}

class ReferenceModelTest : public ::testing::TestWithParam<Variant> {};

TEST_P(ReferenceModelTest, EncoderStatesAndStepLogProbsMatch) {
  const Variant& variant = GetParam();
  const std::string directory = testing::make_temp_directory("rpt-reference");
  testing::write_synthetic_model(directory, {.config = variant.config, .dtype = variant.dtype});
  const auto model = Model::load(directory);
  const testing::ReferenceTransformer reference(directory);

  // Two sentences of different lengths decoded together, long enough to pass k.
  const std::vector<std::vector<int>> sources = {{5, 9, 12, 7, 30, 22, 8, 17, 11}, {6, 14, 3}};
  const std::vector<std::vector<int>> prefixes = {{2, 10, 11, 12, 13, 14, 15, 16}, {2, 20, 21}};
  const auto ours = testing::forced_decode(*model, sources, prefixes);
  for (std::size_t b = 0; b < sources.size(); ++b) {
    const auto expected_states = reference.encode(sources[b]);
    const std::size_t d = expected_states[0].size();
    ASSERT_EQ(ours[b].encoder_output.size(), expected_states.size() * d);
    for (std::size_t t = 0; t < expected_states.size(); ++t) {
      for (std::size_t i = 0; i < d; ++i) {
        EXPECT_NEAR(ours[b].encoder_output[t * d + i], expected_states[t][i], 2e-5)
            << variant.name << " sentence " << b << " position " << t;
      }
    }
    const auto expected_steps = reference.decode(sources[b], prefixes[b]);
    ASSERT_EQ(ours[b].step_log_probs.size(), expected_steps.size());
    for (std::size_t t = 0; t < expected_steps.size(); ++t) {
      for (std::size_t v = 0; v < expected_steps[t].size(); ++v) {
        EXPECT_NEAR(ours[b].step_log_probs[t][v], expected_steps[t][v], 2e-5)
            << variant.name << " sentence " << b << " step " << t << " token " << v;
      }
    }
  }
  std::filesystem::remove_all(directory);
}

INSTANTIATE_TEST_SUITE_P(Configurations, ReferenceModelTest, ::testing::ValuesIn(variants()),
                         [](const auto& test) { return std::string(test.param.name); });

}  // namespace
}  // namespace rpt
