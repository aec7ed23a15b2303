// The scheduler when decoding fails: a fault-injecting engine (the CPU engine underneath) refuses
// steps over a number of rows, or any step or encoding that holds a "poisoned" sentence. Every
// sentence that can be translated must be, token for token as offline, and only the poisoned
// sentence's call may fail.
#include "server/scheduler.h"

#include <climits>
#include <condition_variable>
#include <functional>
#include <map>
#include <new>
#include <mutex>
#include <set>
#include <thread>

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>

#include "engine/errors.h"
#include "engine/translator.h"
#include "server/server_options.h"
#include "tests/support/source_dir.h"

namespace rpt::server {
namespace {

struct Faults {
  int max_rows = INT_MAX;    // steps over this many rows throw ResourceExhausted
  int poison_token = -1;     // a sentence holding this source id fails its encoding or its steps
  bool poison_steps = true;  // false: the encoding fails instead
};

class FaultyBackend final : public DecoderBackend {
 public:
  FaultyBackend(std::unique_ptr<DecoderBackend> inner, Faults faults)
      : inner_(std::move(inner)), faults_(faults) {}

  std::vector<EncodedSentence> encode(const std::vector<std::vector<int>>& sources) override {
    std::vector<bool> poisoned;
    for (const auto& ids : sources) {
      poisoned.push_back(std::find(ids.begin(), ids.end(), faults_.poison_token) != ids.end());
      if (poisoned.back() && !faults_.poison_steps) {
        RPT_THROW(ResourceExhausted, "injected: encoding a poisoned sentence");
      }
    }
    std::vector<EncodedSentence> encoded = inner_->encode(sources);
    for (std::size_t i = 0; i < encoded.size(); ++i) {
      if (poisoned[i]) poisoned_.insert(encoded[i].keys_values);
    }
    return encoded;
  }

  void step(const StepInput& input, StepCandidates& out) override {
    const auto rows = static_cast<int>(input.tokens.size());
    if (rows > faults_.max_rows) RPT_THROW(ResourceExhausted, "injected: ", rows, " rows");
    for (const StepRowGroup& group : input.groups) {
      if (poisoned_.count(group.sentence->keys_values) > 0) {
        RPT_THROW(ResourceExhausted, "injected: a step with a poisoned sentence");
      }
    }
    inner_->step(input, out);
  }

 private:
  std::unique_ptr<DecoderBackend> inner_;
  Faults faults_;
  std::set<const void*> poisoned_;
};

// The CPU engine with its backends wrapped in `Backend(inner backend, setting)`.
template <typename Backend, typename Setting>
class WrappedEngine final : public Engine {
 public:
  WrappedEngine(std::shared_ptr<const Engine> inner, Setting setting)
      : Engine(inner->shared_model(), inner->options()),
        inner_(std::move(inner)),
        setting_(setting) {}
  std::unique_ptr<DecoderBackend> make_backend() const override {
    return std::make_unique<Backend>(inner_->make_backend(), setting_);
  }
  std::string device_description() const override { return "cpu, wrapped for a test"; }

 private:
  std::shared_ptr<const Engine> inner_;
  Setting setting_;
};
using FaultyEngine = WrappedEngine<FaultyBackend, Faults>;

// Records which encoding call each decoding sentence came from, and counts the steps that decode
// sentences of two encodings together (sentences that joined a batch in flight). Its first step
// waits until the test says go on, so a later call arrives while the first one is mid-decoding.
class BatchObservingBackend final : public DecoderBackend {
 public:
  struct Shared {
    std::mutex mutex;
    std::condition_variable changed;
    bool first_step_taken = false;
    bool go_on = false;
    int mixed_steps = 0;
    std::vector<std::size_t> encoded_per_call;  // sentences each encoding call took

    // Waits (at most 30 s) until the first step is taken and holds.
    bool wait_for_first_step() {
      std::unique_lock lock(mutex);
      return changed.wait_for(lock, std::chrono::seconds(30), [&] { return first_step_taken; });
    }
    // Lets the first step go on.
    void release_first_step() {
      {
        std::lock_guard lock(mutex);
        go_on = true;
      }
      changed.notify_all();
    }
  };
  BatchObservingBackend(std::unique_ptr<DecoderBackend> inner, Shared* shared)
      : inner_(std::move(inner)), shared_(*shared) {}

  std::vector<EncodedSentence> encode(const std::vector<std::vector<int>>& sources) override {
    std::vector<EncodedSentence> encoded = inner_->encode(sources);
    for (const EncodedSentence& sentence : encoded) batch_of_[sentence.keys_values] = encodings_;
    ++encodings_;
    const std::lock_guard lock(shared_.mutex);
    shared_.encoded_per_call.push_back(sources.size());
    return encoded;
  }

  void step(const StepInput& input, StepCandidates& out) override {
    std::set<int> batches;
    for (const StepRowGroup& group : input.groups) {
      batches.insert(batch_of_.at(group.sentence->keys_values));
    }
    std::unique_lock lock(shared_.mutex);
    if (batches.size() > 1) ++shared_.mixed_steps;
    if (!shared_.first_step_taken) {
      shared_.first_step_taken = true;
      shared_.changed.notify_all();
      shared_.changed.wait_for(lock, std::chrono::seconds(30), [this] { return shared_.go_on; });
    }
    lock.unlock();
    inner_->step(input, out);
  }

 private:
  std::unique_ptr<DecoderBackend> inner_;
  Shared& shared_;
  std::map<const void*, int> batch_of_;
  int encodings_ = 0;
};

using BatchObservingEngine = WrappedEngine<BatchObservingBackend, BatchObservingBackend::Shared*>;

// Collects a call's sentences and waits for its final status.
class Collector final : public JobObserver {
 public:
  void on_sentence(int index, TranslationResult result) override {
    std::lock_guard lock(mutex_);
    texts_[index] = result.hypotheses.at(0).text;
  }
  void on_finish(const RequestStatus& status) override {
    std::lock_guard lock(mutex_);
    status_ = status;
    done_ = true;
    finished_.notify_all();
  }
  RequestStatus wait(std::map<int, std::string>& texts) {
    std::unique_lock lock(mutex_);
    EXPECT_TRUE(finished_.wait_for(lock, std::chrono::seconds(60), [this] { return done_; }));
    texts = texts_;
    return status_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable finished_;
  std::map<int, std::string> texts_;
  RequestStatus status_;
  bool done_ = false;
};

// A call whose observer fails on one sentence (say, building the reply runs out of memory).
class FailingCollector final : public JobObserver {
 public:
  explicit FailingCollector(Collector& inner) : inner_(inner) {}
  void on_sentence(int index, TranslationResult result) override {
    if (index == 0) throw std::bad_alloc();
    inner_.on_sentence(index, std::move(result));
  }
  void on_finish(const RequestStatus& status) override { inner_.on_finish(status); }

 private:
  Collector& inner_;
};

// A call whose first sentence's hand-over waits (a slow client or serialiser) until `release`
// holds, polled, or 30 s pass.
class BlockingCollector final : public JobObserver {
 public:
  BlockingCollector(Collector& inner, std::function<bool()> release)
      : inner_(inner), release_(std::move(release)) {}
  void on_sentence(int index, TranslationResult result) override {
    if (!blocked_once_) {
      blocked_once_ = true;
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      while (!release_() && std::chrono::steady_clock::now() < give_up) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      released_in_time_ = release_();
    }
    inner_.on_sentence(index, std::move(result));
  }
  void on_finish(const RequestStatus& status) override { inner_.on_finish(status); }
  bool released_in_time() const { return released_in_time_; }

 private:
  Collector& inner_;
  std::function<bool()> release_;
  bool blocked_once_ = false;
  bool released_in_time_ = false;
};

const std::vector<std::string> kTexts = {"Save the file.",
                                         "Open a new window.",
                                         "The file could not be opened.",
                                         "Cancel",
                                         "Delete all selected items from the list.",
                                         "Settings",
                                         "Show hidden files and folders",
                                         "Do you want to replace the existing file?"};

class SchedulerFaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = Model::load(testing::source_dir() + "/tests/fixtures/shaw_k4/model");
    const Translator offline(model_);
    DecodingOptions options;
    options.beam_size = 4;
    // Jobs here carry ids only: no span protection.
    for (const auto& result : offline.translate(kTexts, options, {.enabled = false})) {
      expected_.push_back(result.hypotheses.at(0).text);
    }
  }

  std::vector<int> ids(const std::string& text) const {
    std::vector<int> out;
    for (const auto& piece : model_->source_tokenizer().encode(text)) {
      out.push_back(model_->source_vocabulary().to_id(piece));
    }
    return out;
  }

  // A job over kTexts[first, last), optionally with a poisoned text appended.
  std::shared_ptr<TranslationJob> job(std::size_t first, std::size_t last, Collector& collector,
                                      int poison = -1) {
    auto job = std::make_shared<TranslationJob>();
    for (std::size_t i = first; i < last; ++i) job->source_ids.push_back(ids(kTexts[i]));
    if (poison >= 0) job->source_ids.push_back({poison, poison});
    job->options.beam_size = 4;
    job->observer = &collector;
    return job;
  }

  static ModelDescription description(const std::string& name) {
    ModelDescription d;
    d.name = name;
    return d;
  }

  std::shared_ptr<const Model> model_;
  std::vector<std::string> expected_;
  Metrics metrics_;
};

TEST_F(SchedulerFaultTest, StepsOverTheRowLimitAreRetriedInSmallerGroups) {
  // Two sentences of four beams fit in a step; eight arrive at once.
  auto engine = std::make_shared<FaultyEngine>(Engine::create(model_), Faults{.max_rows = 8});
  ModelMetrics m = metrics_.add_model(description("rows"));
  {
    Scheduler scheduler("rows", engine, {}, m);
    Collector a, b;
    auto first = job(0, 5, a);
    auto second = job(5, kTexts.size(), b);
    ASSERT_TRUE(scheduler.submit(first).ok());
    ASSERT_TRUE(scheduler.submit(second).ok());
    std::map<int, std::string> texts_a, texts_b;
    EXPECT_TRUE(a.wait(texts_a).ok());
    EXPECT_TRUE(b.wait(texts_b).ok());
    for (std::size_t i = 0; i < 5; ++i) EXPECT_EQ(texts_a[static_cast<int>(i)], expected_[i]);
    for (std::size_t i = 5; i < kTexts.size(); ++i) {
      EXPECT_EQ(texts_b[static_cast<int>(i - 5)], expected_[i]);
    }
  }
  EXPECT_GT(m.retried_sentences->Value(), 0);
}

TEST_F(SchedulerFaultTest, OnlyThePoisonedSentencesCallFails) {
  for (const bool in_steps : {true, false}) {
    SCOPED_TRACE(in_steps ? "failing steps" : "failing encodings");
    const int poison = model_->source_vocabulary().size() - 1;
    auto engine = std::make_shared<FaultyEngine>(
        Engine::create(model_), Faults{.poison_token = poison, .poison_steps = in_steps});
    ModelMetrics m = metrics_.add_model(description(in_steps ? "steps" : "encodings"));
    Scheduler scheduler("poison", engine, {}, m);
    Collector poisoned, clean, later;
    ASSERT_TRUE(scheduler.submit(job(0, 3, poisoned, poison)).ok());
    ASSERT_TRUE(scheduler.submit(job(3, 6, clean)).ok());
    ASSERT_TRUE(scheduler.submit(job(6, kTexts.size(), later)).ok());
    std::map<int, std::string> texts;
    const RequestStatus failed = poisoned.wait(texts);
    EXPECT_EQ(failed.code, StatusCode::kResourceExhausted) << failed.message;
    EXPECT_NE(failed.message.find("injected"), std::string::npos) << failed.message;
    // What the gRPC client is told names no source file and line (RPT_THROW's what() does).
    EXPECT_EQ(to_grpc(failed).error_message().find(".cc:"), std::string::npos) << failed.message;
    EXPECT_TRUE(clean.wait(texts).ok());
    for (std::size_t i = 3; i < 6; ++i) EXPECT_EQ(texts[static_cast<int>(i - 3)], expected_[i]);
    EXPECT_TRUE(later.wait(texts).ok());
    for (std::size_t i = 6; i < kTexts.size(); ++i) {
      EXPECT_EQ(texts[static_cast<int>(i - 6)], expected_[i]);
    }
    EXPECT_GT(m.retried_sentences->Value(), 0);
  }
}

TEST_F(SchedulerFaultTest, RetriesAndFailuresAcrossTenantsKeepEveryOtherTranslation) {
  // Three tenants (server/fair_queue.h) share steps over the row limit, one sentence poisoned.
  const int poison = model_->source_vocabulary().size() - 1;
  auto engine = std::make_shared<FaultyEngine>(Engine::create(model_),
                                               Faults{.max_rows = 8, .poison_token = poison});
  ModelMetrics m = metrics_.add_model(description("tenants"));
  Scheduler scheduler("tenants", engine, {}, m);
  Collector a, b, c;
  auto first = job(0, 3, a, poison);
  auto second = job(3, 6, b);
  auto third = job(6, kTexts.size(), c);
  first->tenant = "a";
  second->tenant = "b";
  second->priority = 3;
  third->tenant = "c";
  ASSERT_TRUE(scheduler.submit(first).ok());
  ASSERT_TRUE(scheduler.submit(second).ok());
  ASSERT_TRUE(scheduler.submit(third).ok());
  std::map<int, std::string> texts_b, texts_c, ignored;
  EXPECT_EQ(a.wait(ignored).code, StatusCode::kResourceExhausted);
  EXPECT_TRUE(b.wait(texts_b).ok());
  EXPECT_TRUE(c.wait(texts_c).ok());
  for (std::size_t i = 3; i < 6; ++i) EXPECT_EQ(texts_b[static_cast<int>(i - 3)], expected_[i]);
  for (std::size_t i = 6; i < kTexts.size(); ++i) {
    EXPECT_EQ(texts_c[static_cast<int>(i - 6)], expected_[i]);
  }
  EXPECT_GT(m.retried_sentences->Value(), 0);
  // Every sentence admitted is counted under its tenant.
  EXPECT_GE(m.tenants.wait_seconds("b")->Collect().histogram.sample_count, 3u);
  EXPECT_GE(m.tenants.wait_seconds("c")->Collect().histogram.sample_count, 2u);
}

TEST_F(SchedulerFaultTest, ACallLargerThanTheQueueIsInvalidNotOverloaded) {
  auto engine = Engine::create(model_);
  ModelMetrics m = metrics_.add_model(description("bounds"));
  Scheduler scheduler("bounds", engine, {.max_queued_sentences = 4, .max_queued_tokens = 1000}, m);
  Collector collector;
  const RequestStatus too_many = scheduler.submit(job(0, 5, collector));
  EXPECT_EQ(too_many.code, StatusCode::kInvalidArgument) << too_many.message;
  EXPECT_NE(too_many.message.find("split it"), std::string::npos) << too_many.message;
  // Over the token bound alone: the same verdict.
  Collector tokens_collector;
  auto long_text = job(0, 1, tokens_collector);
  long_text->source_ids[0].assign(1001, long_text->source_ids[0].front());
  const RequestStatus too_long = scheduler.submit(long_text);
  EXPECT_EQ(too_long.code, StatusCode::kInvalidArgument) << too_long.message;
  // Four texts fit the bounds and are translated.
  ASSERT_TRUE(scheduler.submit(job(0, 4, collector)).ok());
  std::map<int, std::string> texts;
  EXPECT_TRUE(collector.wait(texts).ok());
  EXPECT_EQ(texts.size(), 4u);
}

TEST_F(SchedulerFaultTest, AFailedDeliveryFailsOnlyItsCall) {
  auto engine = Engine::create(model_);
  ModelMetrics m = metrics_.add_model(description("delivery"));
  Scheduler scheduler("delivery", engine, {}, m);
  Collector failing_inner, clean;
  FailingCollector failing(failing_inner);
  auto bad = job(0, 3, failing_inner);
  bad->observer = &failing;
  ASSERT_TRUE(scheduler.submit(bad).ok());
  ASSERT_TRUE(scheduler.submit(job(3, kTexts.size(), clean)).ok());
  std::map<int, std::string> texts;
  const RequestStatus failed = failing_inner.wait(texts);
  EXPECT_EQ(failed.code, StatusCode::kInternal) << failed.message;
  EXPECT_TRUE(clean.wait(texts).ok());
  ASSERT_EQ(texts.size(), kTexts.size() - 3);
  for (std::size_t i = 3; i < kTexts.size(); ++i) {
    EXPECT_EQ(texts[static_cast<int>(i - 3)], expected_[i]);
  }
  // The scheduler carries on with later calls.
  Collector later;
  ASSERT_TRUE(scheduler.submit(job(0, 2, later)).ok());
  EXPECT_TRUE(later.wait(texts).ok());
}

// The scheduler hands finished sentences over on another thread: while one call's hand-over
// waits, every other sentence is still decoded (the active and queued gauges reach 0 before it
// is released), and every call ends with its offline translations.
TEST_F(SchedulerFaultTest, ASlowHandOverDoesNotHoldUpDecoding) {
  auto engine = Engine::create(model_);
  ModelMetrics m = metrics_.add_model(description("handover"));
  Scheduler scheduler("handover", engine, {}, m);
  Collector slow_inner, others;
  BlockingCollector slow(slow_inner, [&m] {
    return m.active_sentences->Value() == 0 && m.queued_sentences->Value() == 0;
  });
  auto first = job(0, 1, slow_inner);
  first->observer = &slow;
  ASSERT_TRUE(scheduler.submit(first).ok());
  ASSERT_TRUE(scheduler.submit(job(1, kTexts.size(), others)).ok());
  std::map<int, std::string> texts;
  ASSERT_TRUE(slow_inner.wait(texts).ok());
  EXPECT_EQ(texts[0], expected_[0]);
  ASSERT_TRUE(others.wait(texts).ok());
  for (std::size_t i = 1; i < kTexts.size(); ++i) {
    EXPECT_EQ(texts[static_cast<int>(i - 1)], expected_[i]);
  }
  EXPECT_TRUE(slow.released_in_time()) << "decoding waited for a call's hand-over";
}

// A call arriving while another decodes joins its batch at the next step (in-flight batching), or,
// with static batching, waits until the decoder is empty; both translate as offline.
TEST_F(SchedulerFaultTest, StaticBatchingAdmitsOnlyIntoAnEmptyDecoder) {
  for (const bool inflight : {true, false}) {
    SCOPED_TRACE(inflight ? "in-flight batching" : "static batching");
    BatchObservingBackend::Shared shared;
    auto engine = std::make_shared<BatchObservingEngine>(Engine::create(model_), &shared);
    ModelMetrics m = metrics_.add_model(description(inflight ? "inflight" : "static"));
    Scheduler scheduler("batching", engine, {.inflight_batching = inflight}, m);
    Collector first, second;
    ASSERT_TRUE(scheduler.submit(job(4, 5, first)).ok());  // the longest text
    ASSERT_TRUE(shared.wait_for_first_step());
    ASSERT_TRUE(scheduler.submit(job(0, 4, second)).ok());
    // The scheduler looks at its queue between steps: let the first step go on once the second
    // call is queued.
    shared.release_first_step();
    std::map<int, std::string> texts;
    EXPECT_TRUE(first.wait(texts).ok());
    EXPECT_EQ(texts[0], expected_[4]);
    EXPECT_TRUE(second.wait(texts).ok());
    for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(texts[static_cast<int>(i)], expected_[i]);
    std::lock_guard lock(shared.mutex);
    if (inflight) {
      EXPECT_GT(shared.mixed_steps, 0);
    } else {
      EXPECT_EQ(shared.mixed_steps, 0);
    }
  }
}

TEST_F(SchedulerFaultTest, QueuedCallsThatExpireOrAreCancelledLeaveTheQueue) {
  // The scheduler scans its queue only when a call may have died: a cancellation, a finished
  // call, or a queued call's deadline passed. Behind a decoding call, one queued call dies (it
  // expires, or is cancelled) and one has time left: the dead one ends while queued, never
  // encoded, and the other is translated.
  for (const bool expire : {true, false}) {
    SCOPED_TRACE(expire ? "expires" : "cancelled");
    BatchObservingBackend::Shared shared;
    auto engine = std::make_shared<BatchObservingEngine>(Engine::create(model_), &shared);
    ModelMetrics m = metrics_.add_model(description(expire ? "expires" : "cancelled"));
    Scheduler scheduler("purge", engine, {.max_active_sentences = 1}, m);
    Collector first, dying, later;
    ASSERT_TRUE(scheduler.submit(job(4, 5, first)).ok());
    ASSERT_TRUE(shared.wait_for_first_step());
    auto later_job = job(5, 6, later);
    later_job->deadline = Clock::now() + std::chrono::seconds(120);
    ASSERT_TRUE(scheduler.submit(later_job).ok());
    auto dying_job = job(0, 2, dying);
    if (expire) dying_job->deadline = Clock::now() + std::chrono::milliseconds(20);
    ASSERT_TRUE(scheduler.submit(dying_job).ok());
    if (expire) {
      std::this_thread::sleep_until(dying_job->deadline + std::chrono::milliseconds(30));
    } else {
      dying_job->cancelled.store(true);
      scheduler.wake();
    }
    shared.release_first_step();  // the first call's step ends: the queue is looked at
    std::map<int, std::string> texts;
    EXPECT_TRUE(first.wait(texts).ok());
    EXPECT_EQ(texts[0], expected_[4]);
    const RequestStatus died = dying.wait(texts);
    if (expire) {
      EXPECT_EQ(died.code, StatusCode::kDeadlineExceeded) << died.message;
      EXPECT_EQ(died.message, "deadline exceeded while queued");
    } else {
      EXPECT_EQ(died.code, StatusCode::kCancelled) << died.message;
    }
    EXPECT_TRUE(texts.empty());
    EXPECT_TRUE(later.wait(texts).ok());
    EXPECT_EQ(texts[0], expected_[5]);
    const std::lock_guard lock(shared.mutex);
    EXPECT_EQ(shared.encoded_per_call, (std::vector<std::size_t>{1, 1}));  // first, later
  }
}

TEST_F(SchedulerFaultTest, AdmissionInGroupsWaitsForFreeRowsAndKeepsTheTranslations) {
  // Four rows, eight texts: the first four start together, later ones join three at a time (or
  // the last one that is left), never one by one.
  BatchObservingBackend::Shared shared;
  shared.go_on = true;
  auto engine = std::make_shared<BatchObservingEngine>(Engine::create(model_), &shared);
  ModelMetrics m = metrics_.add_model(description("grouped"));
  Scheduler scheduler("grouped", engine, {.max_active_sentences = 4, .admission_group = 3}, m);
  Collector collector;
  ASSERT_TRUE(scheduler.submit(job(0, kTexts.size(), collector)).ok());
  std::map<int, std::string> texts;
  ASSERT_TRUE(collector.wait(texts).ok());
  for (std::size_t i = 0; i < kTexts.size(); ++i) {
    EXPECT_EQ(texts[static_cast<int>(i)], expected_[i]) << "text " << i;
  }
  const std::lock_guard lock(shared.mutex);
  const std::vector<std::size_t>& calls = shared.encoded_per_call;
  ASSERT_GE(calls.size(), 2u);
  EXPECT_EQ(calls.front(), 4u);
  std::size_t total = 0;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    total += calls[i];
    if (i + 1 < calls.size()) {
      EXPECT_GE(calls[i], 3u) << "encoding call " << i;
    }
  }
  EXPECT_EQ(total, kTexts.size());
}

TEST_F(SchedulerFaultTest, AdmissionGroupOutsideOneToTheActiveSentencesIsRefused) {
  ModelMetrics by_device = metrics_.add_model(description("by-device"));
  EXPECT_NO_THROW(Scheduler("by-device", Engine::create(model_),
                            {.max_active_sentences = 4, .admission_group = kAdmissionGroupByDevice},
                            by_device));
  for (const int group : {-1, 5}) {
    ModelMetrics m = metrics_.add_model(description("refused" + std::to_string(group)));
    EXPECT_THROW(Scheduler("refused", Engine::create(model_),
                           {.max_active_sentences = 4, .admission_group = group}, m),
                 InvalidArgument)
        << group;
  }
}

TEST(ServerOptionsTest, AdmissionGroupOverTheActiveSentencesIsRefusedAtStart) {
  for (const auto& [flags, refused] : std::vector<std::pair<std::string, bool>>{
           {"--model m=dir --admission-group 8 --max-active-sentences 4", true},
           {"--model m=dir --admission-group 4 --max-active-sentences 4", false}}) {
    CLI::App app;
    ServerOptions options;
    add_server_options(app, options);
    app.parse(flags, false);
    if (refused) {
      EXPECT_THROW(finalize_server_options(options), std::invalid_argument) << flags;
    } else {
      EXPECT_NO_THROW(finalize_server_options(options)) << flags;
      EXPECT_EQ(options.scheduler.admission_group, 4);
    }
  }
}

}  // namespace
}  // namespace rpt::server
