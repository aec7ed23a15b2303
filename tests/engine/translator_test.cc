// The Translator facade: batch invariance (a sentence's translation does not depend on what it
// is decoded with), in-flight admission, thread safety and input validation.
#include "engine/translator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <thread>

#include "engine/errors.h"
#include "engine/text_segments.h"
#include "tests/support/weights_writer.h"

namespace rpt {
namespace {

class TranslatorTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    directory_ = testing::make_temp_directory("rpt-translator");
    testing::SyntheticModelOptions options = testing::relative_model_options(
        {.encoder_layers = 2, .decoder_layers = 2, .d_model = 16, .heads = 4, .d_ff = 32}, 4);
    options.vocabulary_size = 60;
    testing::write_synthetic_model(directory_, options);
    model_ = Model::load(directory_);
  }
  static void TearDownTestSuite() {
    model_.reset();
    std::filesystem::remove_all(directory_);
  }

  static std::vector<std::string> sentences() {
    return {"w5 w6 w7",
            "w10 w11 w12 w13 w14 w15 w16 w17 w18 w19 w20 w21 w22",
            "w30",
            "w40 w41 w42 w43 w44 w45",
            "w7 w7 w7 w7 w7 w7 w7 w7 w7 w7 w7 w7 w7 w7 w7 w7 w7 w7 w7 w7 w7 w7",
            "w50 w51",
            "w9 w8 w7 w6 w5 w4 w33 w34 w35"};
  }

  static DecodingOptions beam(int size, int n_best) {
    DecodingOptions options;
    options.beam_size = size;
    options.n_best = n_best;
    options.max_length = 24;
    return options;
  }

  static void expect_same(const TranslationResult& a, const TranslationResult& b,
                          const std::string& what) {
    ASSERT_EQ(a.hypotheses.size(), b.hypotheses.size()) << what;
    for (std::size_t h = 0; h < a.hypotheses.size(); ++h) {
      EXPECT_EQ(a.hypotheses[h].ids, b.hypotheses[h].ids) << what << " hypothesis " << h;
      // Bitwise: every CPU kernel computes a row the same whatever the rows beside it.
      EXPECT_EQ(a.hypotheses[h].score, b.hypotheses[h].score) << what;
    }
  }

  // `calls` threads translating sentences() at once (beam 4), each held to `expected`.
  static void expect_concurrent_calls_agree(const Translator& translator, int calls,
                                            const std::vector<TranslationResult>& expected) {
    std::vector<std::vector<TranslationResult>> results(static_cast<std::size_t>(calls));
    std::vector<std::thread> threads;
    for (auto& slot : results) {
      threads.emplace_back([&] { slot = translator.translate(sentences(), beam(4, 1)); });
    }
    for (auto& thread : threads) thread.join();
    for (const auto& result : results) {
      ASSERT_EQ(result.size(), expected.size());
      for (std::size_t i = 0; i < result.size(); ++i) expect_same(result[i], expected[i], "thread");
    }
  }

  static inline std::string directory_;
  static inline std::shared_ptr<const Model> model_;
};

TEST_F(TranslatorTest, SentenceAloneEqualsSentenceInMixedBatch) {
  const Translator translator(model_);
  for (const auto& options : {beam(1, 1), beam(4, 2)}) {
    const auto batched = translator.translate(sentences(), options);
    ASSERT_EQ(batched.size(), sentences().size());
    for (std::size_t i = 0; i < sentences().size(); ++i) {
      const auto alone = translator.translate({sentences()[i]}, options);
      ASSERT_EQ(alone.size(), 1u);
      expect_same(alone[0], batched[i], "sentence " + std::to_string(i));
    }
  }
}

TEST_F(TranslatorTest, InFlightAdmissionGivesTheSameResults) {
  // Two sentences at a time: the others join as earlier ones finish, at other steps.
  const Translator narrow(model_, {.max_batch_size = 2});
  const Translator wide(model_, {.max_batch_size = 64});
  const auto a = narrow.translate(sentences(), beam(3, 3));
  const auto b = wide.translate(sentences(), beam(3, 3));
  ASSERT_EQ(a.size(), sentences().size());
  ASSERT_EQ(b.size(), sentences().size());
  for (std::size_t i = 0; i < a.size(); ++i)
    expect_same(a[i], b[i], "sentence " + std::to_string(i));
}

TEST_F(TranslatorTest, AdmissionInGroupsGivesTheSameResults) {
  // Four at a time; grouped, the waiting join only once three slots are free (or all fit), so
  // sentences start at other steps beside other company.
  const Translator each(model_, {.max_batch_size = 4});
  const Translator grouped(model_, {.max_batch_size = 4, .admission_group = 3});
  for (const auto& options : {beam(1, 1), beam(3, 2)}) {
    const auto a = each.translate(sentences(), options);
    const auto b = grouped.translate(sentences(), options);
    ASSERT_EQ(a.size(), sentences().size());
    ASSERT_EQ(b.size(), sentences().size());
    for (std::size_t i = 0; i < a.size(); ++i)
      expect_same(a[i], b[i], "sentence " + std::to_string(i));
  }
  EXPECT_THROW(Translator(model_, {.max_batch_size = 4, .admission_group = 5}), InvalidArgument);
  EXPECT_THROW(Translator(model_, {.admission_group = -1}), InvalidArgument);
}

TEST_F(TranslatorTest, AdmissionGroupByDeviceIsTheMeasuredBest) {
  // 8 on a GPU (measured on an H200), 1 on the CPU (no gain measured), never over the batch;
  // a group asked for is kept.
  EXPECT_EQ(admission_group_for(Device::kCuda, kAdmissionGroupByDevice, 32), 8);
  EXPECT_EQ(admission_group_for(Device::kCuda, kAdmissionGroupByDevice, 4), 4);
  EXPECT_EQ(admission_group_for(Device::kCpu, kAdmissionGroupByDevice, 32), 1);
  EXPECT_EQ(admission_group_for(Device::kCuda, 3, 32), 3);
  EXPECT_EQ(admission_group_for(Device::kCpu, 5, 32), 5);
  EXPECT_EQ(Translator(model_, {}).options().admission_group, 1);
  EXPECT_EQ(
      Translator(model_, {.max_batch_size = 4, .admission_group = 3}).options().admission_group, 3);
}

TEST(TranslatorSourceEos, AModelThatAsksGetsItsPrefixAndEosAroundEverySource) {
  // T5's tokenizer ends every source with </s> (ModelConfig::append_source_eos), and a T5
  // checkpoint reads its task prefix first (source_prefix); a segment the model reads nothing of
  // stays empty (layout), never a lone prefix or </s>.
  const std::string directory = testing::make_temp_directory("rpt-source-eos");
  testing::SyntheticModelOptions options = testing::relative_model_options(
      {.encoder_layers = 1, .decoder_layers = 1, .d_model = 8, .heads = 2, .d_ff = 16}, 2);
  options.config.append_source_eos = true;
  testing::write_synthetic_model(directory, options);
  {
    const Translator translator(Engine::create(Model::load(directory)));
    const int eos = translator.model().source_vocabulary().to_id("</s>");
    EXPECT_EQ(translator.prepare("w5 w9", 0, {}).ids, (std::vector<int>{5, 9, eos}));
    EXPECT_TRUE(prepare_source(translator.model(), "", {}).ids.empty());
    const auto results = translator.translate({"w5 w9"}, {.beam_size = 2, .max_length = 5});
    EXPECT_EQ(results[0].source_tokens, 3);
  }
  options.config.source_prefix = "w7 w8";
  testing::write_synthetic_model(directory, options);
  const Translator translator(Engine::create(Model::load(directory)));
  const int eos = translator.model().source_vocabulary().to_id("</s>");
  EXPECT_EQ(translator.prepare("w5 w9", 0, {}).ids, (std::vector<int>{7, 8, 5, 9, eos}));
  EXPECT_TRUE(prepare_source(translator.model(), " ", {}).ids.empty());
  std::filesystem::remove_all(directory);
}

TEST(SentencesToAdmit, WaitForAGroupUnlessTheDecoderIsEmptyOrAllWaitingFit) {
  EXPECT_EQ(sentences_to_admit(5, 10, false, 1), 5u);  // group 1: whatever fits, now
  EXPECT_EQ(sentences_to_admit(2, 10, false, 4), 0u);  // 2 slots of a group of 4: wait
  EXPECT_EQ(sentences_to_admit(4, 10, false, 4), 4u);
  EXPECT_EQ(sentences_to_admit(6, 10, false, 4), 6u);  // more than a group: all that fit
  EXPECT_EQ(sentences_to_admit(2, 10, true, 4), 2u);   // an empty decoder never waits
  EXPECT_EQ(sentences_to_admit(3, 2, false, 4), 2u);   // every waiting sentence fits
  EXPECT_EQ(sentences_to_admit(0, 5, false, 1), 0u);
  EXPECT_EQ(sentences_to_admit(7, 0, false, 4), 0u);
}

TEST_F(TranslatorTest, ConcurrentCallsAgree) {
  const Translator translator(model_);
  const auto expected = translator.translate(sentences(), beam(4, 1));
  ASSERT_EQ(expected.size(), sentences().size());
  expect_concurrent_calls_agree(translator, 4, expected);
}

// An engine that keeps backends between calls, as the GPU's does, over the CPU's arithmetic;
// it counts the backends it makes.
class KeepingEngine final : public Engine {
 public:
  explicit KeepingEngine(std::shared_ptr<const Engine> cpu)
      : Engine(cpu->shared_model(), cpu->options()), cpu_(std::move(cpu)) {}
  std::unique_ptr<DecoderBackend> make_backend() const override {
    ++made;
    return cpu_->make_backend();
  }
  bool keeps_backends() const override { return true; }
  std::string device_description() const override { return cpu_->device_description(); }
  const Engine& cpu() const { return *cpu_; }

  mutable std::atomic<int> made{0};

 private:
  std::shared_ptr<const Engine> cpu_;
};

TEST_F(TranslatorTest, KeptBackendServesCallAfterCallAndAFailedCallDropsIt) {
  const Translator fresh(model_);
  const auto engine = std::make_shared<KeepingEngine>(Engine::create(model_));
  const Translator translator(engine);
  for (const std::string& sentence : sentences()) {
    const auto expected = fresh.translate({sentence}, beam(4, 1));
    const auto got = translator.translate({sentence}, beam(4, 1));
    ASSERT_EQ(got.size(), 1u);
    expect_same(got[0], expected[0], sentence);
  }
  EXPECT_EQ(engine->made.load(), 1) << "one backend served every call";

  // Calls at once: one takes the kept backend, the others make their own; results unchanged.
  const auto expected = fresh.translate(sentences(), beam(4, 1));
  expect_concurrent_calls_agree(translator, 3, expected);
  EXPECT_LE(engine->made.load(), 1 + 3);

  // A call refused by the memory limit drops its backend (its state is not trusted) and what it
  // held; the next call makes a fresh one.
  const std::size_t single = [&] {
    const auto measure = Engine::create(model_);
    Translator(measure, {.max_batch_size = 1}).translate(sentences(), beam(4, 1));
    return measure->peak_device_memory_bytes();
  }();
  const auto limited = std::make_shared<KeepingEngine>(
      Engine::create(model_, {.memory_limit_bytes = single + single / 2}));
  const Translator all_at_once(limited, {.max_batch_size = 64});
  EXPECT_THROW(all_at_once.translate(sentences(), beam(4, 1)), ResourceExhausted);
  EXPECT_EQ(limited->cpu().device_memory_bytes(), 0u) << "the refused call released its state";
  const int made_before = limited->made.load();
  const auto one = all_at_once.translate({sentences()[2]}, beam(4, 1));
  ASSERT_EQ(one.size(), 1u);
  expect_same(one[0], expected[2], "after a refused call");
  EXPECT_EQ(limited->made.load(), made_before + 1) << "the failed call's backend was not kept";
}

// A backend over the CPU's that records, per step, the search limit it was given and the
// furthest position it decoded.
class LimitRecordingEngine final : public Engine {
 public:
  struct Step {
    int max_positions = 0;
    int furthest_position = -1;
  };
  explicit LimitRecordingEngine(std::shared_ptr<const Engine> cpu)
      : Engine(cpu->shared_model(), cpu->options()), cpu_(std::move(cpu)) {}
  std::unique_ptr<DecoderBackend> make_backend() const override {
    return std::make_unique<Backend>(cpu_->make_backend(), &steps);
  }
  std::string device_description() const override { return cpu_->device_description(); }

  mutable std::vector<Step> steps;

 private:
  class Backend final : public DecoderBackend {
   public:
    Backend(std::unique_ptr<DecoderBackend> inner, std::vector<Step>* steps)
        : inner_(std::move(inner)), steps_(steps) {}
    std::vector<EncodedSentence> encode(const std::vector<std::vector<int>>& sources) override {
      return inner_->encode(sources);
    }
    void step(const StepInput& input, StepCandidates& out) override {
      Step step{.max_positions = input.max_positions};
      for (int position : input.positions) {
        step.furthest_position = std::max(step.furthest_position, position);
      }
      steps_->push_back(step);
      inner_->step(input, out);
    }

   private:
    std::unique_ptr<DecoderBackend> inner_;
    std::vector<Step>* steps_;
  };
  std::shared_ptr<const Engine> cpu_;
};

TEST_F(TranslatorTest, StepsCarryTheSearchLimitThatBoundsTheirPositions) {
  const auto engine = std::make_shared<LimitRecordingEngine>(Engine::create(model_));
  DecodingOptions options = beam(4, 1);
  options.max_length = 5;
  options.min_length = 5;  // every sentence decodes to its limit
  Translator(engine).translate(sentences(), options);
  ASSERT_FALSE(engine->steps.empty());
  int furthest = -1;
  for (const auto& step : engine->steps) {
    EXPECT_EQ(step.max_positions, 5);
    EXPECT_LT(step.furthest_position, step.max_positions);
    furthest = std::max(furthest, step.furthest_position);
  }
  EXPECT_EQ(furthest, 4) << "the limit is reached, not just bounded: a cache sized to it is full";
}

TEST_F(TranslatorTest, SentencesInAScriptTheModelCannotReadComeBackAsTheyAre) {
  const Translator translator(model_);
  const auto expected = translator.translate({"w5 w6 w7"}, beam(4, 1));
  const auto results = translator.translate({"Привет мир", "w5 w6 w7", "日本語"}, beam(4, 1));
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0].hypotheses.at(0).text, "Привет мир");
  EXPECT_EQ(results[0].segments, 0);
  EXPECT_EQ(results[2].hypotheses.at(0).text, "日本語");
  expect_same(results[1], expected[0], "beside unreadable sentences");
  EXPECT_THROW(translator.translate({""}, beam(4, 1)), InvalidArgument) << "empty: still refused";
}

TEST_F(TranslatorTest, NBestIsSortedAndDistinct) {
  const Translator translator(model_);
  const auto results = translator.translate(sentences(), beam(5, 5));
  ASSERT_EQ(results.size(), sentences().size());
  for (const auto& result : results) {
    ASSERT_EQ(result.hypotheses.size(), 5u);
    for (std::size_t h = 1; h < 5; ++h) {
      EXPECT_GE(result.hypotheses[h - 1].score, result.hypotheses[h].score);
      EXPECT_NE(result.hypotheses[h - 1].ids, result.hypotheses[h].ids);
    }
  }
}

TEST_F(TranslatorTest, RefusesBadInputBeforeAnyWork) {
  const Translator translator(model_, {.max_input_length = 8});
  EXPECT_THROW(translator.translate({"w5", "   "}, beam(1, 1)), InvalidArgument);
  EXPECT_THROW(translator.translate({"w5 w5 w5 w5 w5 w5 w5 w5 w5"}, beam(1, 1)), InvalidArgument);
  EXPECT_THROW(translator.translate({"w5"}, beam(2, 3)), InvalidArgument);
  EXPECT_THROW(translator.translate_ids({{5, 99999}}, beam(1, 1)), InvalidArgument);
  EXPECT_TRUE(translator.translate({}, beam(1, 1)).empty());
  // Unknown words map to <unk> rather than failing.
  EXPECT_EQ(translator.translate({"never-seen"}, beam(1, 1)).size(), 1u);
}

TEST_F(TranslatorTest, CpuMemoryLimitRefusesWhatDoesNotFitAndReleasesEverything) {
  const Translator unlimited(model_);
  const auto expected = unlimited.translate(sentences(), beam(4, 1));
  // What one sentence at a time needs, then a limit between that and the whole batch's need.
  const auto measure = Engine::create(model_);
  const Translator one_at_a_time(measure, {.max_batch_size = 1});
  one_at_a_time.translate(sentences(), beam(4, 1));
  const std::size_t single = measure->peak_device_memory_bytes();
  ASSERT_GT(single, 0u) << "the CPU engine charges its decoding state";
  EXPECT_EQ(measure->device_memory_bytes(), 0u) << "released when the decoder is gone";

  const auto limited = Engine::create(model_, {.memory_limit_bytes = single + single / 2});
  const Translator all_at_once(limited, {.max_batch_size = 64});
  EXPECT_THROW(all_at_once.translate(sentences(), beam(4, 1)), ResourceExhausted);
  EXPECT_EQ(limited->device_memory_bytes(), 0u) << "a refused call releases what it held";
  // The engine carries on, and what fits translates exactly as without a limit.
  const Translator fitting(limited, {.max_batch_size = 1});
  const auto results = fitting.translate(sentences(), beam(4, 1));
  ASSERT_EQ(results.size(), expected.size());
  for (std::size_t i = 0; i < results.size(); ++i) {
    expect_same(results[i], expected[i], "sentence " + std::to_string(i));
  }
}

TEST_F(TranslatorTest, MaxLengthBoundsEveryHypothesis) {
  const Translator translator(model_);
  DecodingOptions options = beam(2, 2);
  options.max_length = 3;
  const auto results = translator.translate(sentences(), options);
  ASSERT_EQ(results.size(), sentences().size());
  for (const auto& result : results) {
    ASSERT_EQ(result.hypotheses.size(), 2u);
    for (const auto& h : result.hypotheses) EXPECT_LE(h.ids.size(), 3u);
  }
}

}  // namespace
}  // namespace rpt

namespace rpt {
namespace {

TEST(ComputeOptionsParsing, AcceptsTheDocumentedNamesAndRefusesOthers) {
  EXPECT_EQ(parse_precision("float16"), kernels::Precision::kFloat16);
  EXPECT_EQ(parse_precision("BF16"), kernels::Precision::kBFloat16);
  EXPECT_EQ(parse_precision("fp32"), kernels::Precision::kFloat32);
  EXPECT_EQ(parse_precision("INT8"), kernels::Precision::kInt8);
  EXPECT_THROW(parse_precision("int4"), InvalidArgument);
  EXPECT_EQ(parse_device("cuda"), Device::kCuda);
  EXPECT_EQ(parse_device("CPU"), Device::kCpu);
  EXPECT_THROW(parse_device("tpu"), InvalidArgument);
}

TEST(EngineCreate, RefusesWhatTheDeviceCannotDo) {
  const std::string directory = testing::make_temp_directory("rpt-engine");
  testing::SyntheticModelOptions options;
  options.config.architecture = {
      .encoder_layers = 1, .decoder_layers = 1, .d_model = 8, .heads = 2, .d_ff = 16};
  testing::write_synthetic_model(directory, options);
  const auto model = Model::load(directory, {.cpu_layout = false});  // a GPU's too
  EXPECT_THROW(Engine::create(model, {.precision = kernels::Precision::kFloat16}), InvalidArgument)
      << "the CPU computes in float32";
  EXPECT_EQ(Engine::create(model)->device_description(), "cpu");
  const bool gpu = cuda_device_count() > 0;
  if (!gpu) {
    // No device (or a CPU-only build): a clear refusal, not a crash.
    EXPECT_THROW(Engine::create(model, {.device = Device::kCuda}), InvalidArgument);
  } else {
    EXPECT_NE(Engine::create(model, {.device = Device::kCuda})->device_description(), "cpu");
  }
  std::filesystem::remove_all(directory);
}

}  // namespace
}  // namespace rpt
