// rpt-server's API through real gRPC on loopback: translate, batch, stream, n-best, routing,
// ListModels, health, reflection, and every refusal with its status and message.
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "grpc/health/v1/health.grpc.pb.h"
#include "grpc_reflection_v1alpha/reflection.grpc.pb.h"
#include "server_process.h"

namespace rpt::server_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A copy of the fixture model relabelled en -> fr, to test routing between two models.
std::string make_french_model(const std::string& directory) {
  std::filesystem::copy(fixture_model(), directory, std::filesystem::copy_options::recursive);
  const std::string config_path = directory + "/config.json";
  nlohmann::json config;
  std::ifstream(config_path) >> config;
  config["target_language"] = "fr";
  std::ofstream(config_path) << config.dump(2);
  return directory;
}

class ServerApiTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    temp_ = make_temp_dir("rpt_api_test_");
    const std::string french = make_french_model(temp_ + "/en-fr");
    server_ = new ServerProcess({"--model", "en-de=" + fixture_model(), "--model",
                                 "en-fr=" + french, "--max-input-length", "32",
                                 "--max-texts-per-request", "8", "--max-beam-size", "8",
                                 "--max-decoding-length", "300", "--beam-size", "4"});
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
    std::filesystem::remove_all(temp_);
  }

  static v1::TranslateRequest request(std::vector<std::string> texts,
                                      const std::string& model = "en-de") {
    v1::TranslateRequest r;
    r.mutable_model()->set_model(model);
    for (auto& text : texts) r.add_texts(text);
    return r;
  }
  static grpc::Status translate(const v1::TranslateRequest& r, v1::TranslateResponse* response) {
    auto context = context_with_deadline(30);
    return server_->stub()->Translate(context.get(), r, response);
  }
  static void expect_refused(const v1::TranslateRequest& r, grpc::StatusCode code,
                             const std::string& message_part) {
    v1::TranslateResponse response;
    const grpc::Status status = translate(r, &response);
    EXPECT_EQ(status.error_code(), code) << status.error_message();
    EXPECT_THAT(status.error_message(), HasSubstr(message_part));
  }

  static inline ServerProcess* server_ = nullptr;
  static inline std::string temp_;
};

TEST_F(ServerApiTest, TranslatesABatchInRequestOrder) {
  v1::TranslateResponse response;
  const std::vector<std::string> texts = {"Save the file.", "Open a new window.",
                                          "The file could not be opened."};
  ASSERT_TRUE(translate(request(texts), &response).ok());
  ASSERT_EQ(response.translations_size(), 3);
  EXPECT_EQ(response.model(), "en-de");
  for (const auto& translation : response.translations()) {
    ASSERT_EQ(translation.hypotheses_size(), 1);
    EXPECT_FALSE(translation.hypotheses(0).text().empty());
    EXPECT_GT(translation.source_tokens(), 0u);
  }
  // Each text alone gives the same translation as in the batch.
  for (int i = 0; i < 3; ++i) {
    v1::TranslateResponse alone;
    ASSERT_TRUE(translate(request({texts[static_cast<std::size_t>(i)]}), &alone).ok());
    EXPECT_EQ(alone.translations(0).hypotheses(0).text(),
              response.translations(i).hypotheses(0).text());
  }
}

TEST_F(ServerApiTest, NBestWithScoresAndTokens) {
  auto r = request({"Save the file."});
  r.mutable_options()->set_beam_size(5);
  r.mutable_options()->set_n_best(3);
  r.mutable_options()->set_return_scores(true);
  r.mutable_options()->set_return_tokens(true);
  v1::TranslateResponse response;
  ASSERT_TRUE(translate(r, &response).ok());
  const auto& hypotheses = response.translations(0).hypotheses();
  ASSERT_EQ(hypotheses.size(), 3);
  for (int i = 0; i < 3; ++i) {
    EXPECT_FALSE(hypotheses[i].tokens().empty());
    EXPECT_LT(hypotheses[i].score(), 0.0f);
    if (i > 0) {
      EXPECT_GE(hypotheses[i - 1].score(), hypotheses[i].score());
    }
  }
  EXPECT_EQ(static_cast<int>(response.translations(0).target_tokens()),
            hypotheses[0].tokens_size());
}

TEST_F(ServerApiTest, StreamSendsEveryTextOnceWithItsIndex) {
  const std::vector<std::string> texts = {"Save the file.", "Open a new window.",
                                          "Delete all selected items from the list.", "Cancel"};
  v1::TranslateResponse unary;
  ASSERT_TRUE(translate(request(texts), &unary).ok());

  auto context = context_with_deadline(30);
  auto reader = server_->stub()->TranslateStream(context.get(), request(texts));
  v1::TranslateStreamResponse message;
  std::set<std::uint32_t> seen;
  while (reader->Read(&message)) {
    ASSERT_LT(message.index(), texts.size());
    EXPECT_TRUE(seen.insert(message.index()).second) << "index sent twice";
    EXPECT_EQ(message.model(), "en-de");
    EXPECT_EQ(message.translation().hypotheses(0).text(),
              unary.translations(static_cast<int>(message.index())).hypotheses(0).text());
  }
  EXPECT_TRUE(reader->Finish().ok());
  EXPECT_EQ(seen.size(), texts.size());
}

TEST_F(ServerApiTest, StreamRefusalEndsTheStreamWithTheStatus) {
  auto context = context_with_deadline(30);
  auto reader = server_->stub()->TranslateStream(context.get(), request({"ok", "\xff"}));
  v1::TranslateStreamResponse message;
  EXPECT_FALSE(reader->Read(&message));
  const grpc::Status status = reader->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("texts[1]"));
}

// Blank texts (Unicode's blanks, controls, mixes) come back as they were, without decoding and
// without failing the call; a paragraph comes back as its sentences translated alone, in its
// layout.
TEST_F(ServerApiTest, BlankTextsAndLayoutComeBackAsSent) {
  const std::vector<std::string> blanks = {"",
                                           "\n",
                                           "\t\r\n",
                                           "\xc2\xa0",
                                           "\xe2\x80\x80\xe2\x80\x8b",
                                           "\xe3\x80\x80",
                                           "\xef\xbb\xbf",
                                           "\xc2\x85\xe2\x81\xa0",
                                           "\x01\x7f\x1f",  // U+0000 is refused
                                           " \xc2\xa0\t\xe3\x80\x80\n"};
  std::vector<std::string> texts = {"Open the file"};  // at most 8 texts a call here
  texts.insert(texts.end(), blanks.begin(), blanks.begin() + 7);
  v1::TranslateResponse response;
  const grpc::Status status = translate(request(texts), &response);
  ASSERT_TRUE(status.ok()) << status.error_code() << " " << status.error_message();
  ASSERT_EQ(response.translations_size(), static_cast<int>(texts.size()));
  EXPECT_EQ(response.translations(0).segments(), 1u);
  for (std::size_t i = 0; i + 1 < texts.size(); ++i) {
    const v1::Translation& blank = response.translations(static_cast<int>(i) + 1);
    EXPECT_EQ(blank.hypotheses(0).text(), blanks[i]) << i;
    EXPECT_EQ(blank.segments(), 0u);
    EXPECT_EQ(blank.source_tokens(), 0u);
  }
  v1::TranslateResponse rest;
  ASSERT_TRUE(
      translate(request(std::vector<std::string>(blanks.begin() + 7, blanks.end())), &rest).ok());
  for (int i = 0; i < rest.translations_size(); ++i) {
    EXPECT_EQ(rest.translations(i).hypotheses(0).text(), blanks[static_cast<std::size_t>(i) + 7]);
  }

  v1::TranslateResponse alone;
  ASSERT_TRUE(translate(request({"Open the file.", "Save %s as.", "Quit!"}), &alone).ok());
  v1::TranslateResponse paragraph;
  ASSERT_TRUE(translate(request({"  Open the file.  Save %s as.\r\n\r\n\t- Quit! \xe2\x9c\x93 "}),
                        &paragraph)
                  .ok());
  EXPECT_EQ(paragraph.translations(0).segments(), 3u);
  EXPECT_EQ(paragraph.translations(0).hypotheses(0).text(),
            "  " + alone.translations(0).hypotheses(0).text() + "  " +
                alone.translations(1).hypotheses(0).text() + "\r\n\r\n\t- " +
                alone.translations(2).hypotheses(0).text() + " \xe2\x9c\x93 ");
}

TEST_F(ServerApiTest, RoutesByNameOrLanguagePair) {
  v1::TranslateResponse response;
  v1::TranslateRequest by_target = request({"Save the file."}, "");
  by_target.mutable_model()->set_target_language("fr");
  ASSERT_TRUE(translate(by_target, &response).ok());
  EXPECT_EQ(response.model(), "en-fr");

  by_target.mutable_model()->set_target_language("de");
  by_target.mutable_model()->set_source_language("en");
  ASSERT_TRUE(translate(by_target, &response).ok());
  EXPECT_EQ(response.model(), "en-de");

  // Two models translate from English: the source alone is ambiguous.
  v1::TranslateRequest ambiguous = request({"Save the file."}, "");
  ambiguous.mutable_model()->set_source_language("en");
  expect_refused(ambiguous, grpc::StatusCode::INVALID_ARGUMENT, "several models match");
}

TEST_F(ServerApiTest, ListModelsDescribesEachModel) {
  grpc::ClientContext context;
  v1::ListModelsResponse response;
  ASSERT_TRUE(server_->stub()->ListModels(&context, {}, &response).ok());
  ASSERT_EQ(response.models_size(), 2);
  const auto& de = response.models(0);
  EXPECT_EQ(de.name(), "en-de");
  EXPECT_EQ(de.source_language(), "en");
  EXPECT_EQ(de.target_language(), "de");
  EXPECT_EQ(de.device(), "cpu");
  EXPECT_EQ(de.dtype(), "float32");
  EXPECT_EQ(de.position_type(), "relative");
  EXPECT_EQ(de.max_relative_position(), 4u);
  EXPECT_EQ(de.max_input_length(), 32u);
  EXPECT_EQ(response.models(1).target_language(), "fr");
}

TEST_F(ServerApiTest, HealthIsServing) {
  auto health = grpc::health::v1::Health::NewStub(server_->channel());
  for (const std::string service : {"", "rpt.v1.Translator"}) {
    grpc::ClientContext context;
    grpc::health::v1::HealthCheckRequest check;
    check.set_service(service);
    grpc::health::v1::HealthCheckResponse response;
    ASSERT_TRUE(health->Check(&context, check, &response).ok());
    EXPECT_EQ(response.status(), grpc::health::v1::HealthCheckResponse::SERVING) << service;
  }
  grpc::ClientContext context;
  grpc::health::v1::HealthCheckRequest unknown;
  unknown.set_service("no.such.Service");
  grpc::health::v1::HealthCheckResponse response;
  EXPECT_EQ(health->Check(&context, unknown, &response).error_code(), grpc::StatusCode::NOT_FOUND);
  // Watch of an unknown service stays open with SERVICE_UNKNOWN (the health protocol).
  grpc::ClientContext watch_context;
  auto watch = health->Watch(&watch_context, unknown);
  ASSERT_TRUE(watch->Read(&response));
  EXPECT_EQ(response.status(), grpc::health::v1::HealthCheckResponse::SERVICE_UNKNOWN);
  watch_context.TryCancel();
  EXPECT_EQ(watch->Finish().error_code(), grpc::StatusCode::CANCELLED);
}

TEST_F(ServerApiTest, ReflectionListsTheServices) {
  auto reflection = grpc::reflection::v1alpha::ServerReflection::NewStub(server_->channel());
  grpc::ClientContext context;
  auto stream = reflection->ServerReflectionInfo(&context);
  grpc::reflection::v1alpha::ServerReflectionRequest list;
  list.set_list_services("");
  ASSERT_TRUE(stream->Write(list));
  grpc::reflection::v1alpha::ServerReflectionResponse response;
  ASSERT_TRUE(stream->Read(&response));
  std::set<std::string> services;
  for (const auto& s : response.list_services_response().service()) services.insert(s.name());
  EXPECT_TRUE(services.count("rpt.v1.Translator"));
  EXPECT_TRUE(services.count("grpc.health.v1.Health"));

  grpc::reflection::v1alpha::ServerReflectionRequest file;
  file.set_file_containing_symbol("rpt.v1.Translator");
  ASSERT_TRUE(stream->Write(file));
  ASSERT_TRUE(stream->Read(&response));
  EXPECT_GT(response.file_descriptor_response().file_descriptor_proto_size(), 0);
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
}

TEST_F(ServerApiTest, RefusesBadInputWithWhatIsWrongAndTheLimit) {
  using grpc::StatusCode;
  expect_refused(request({}), StatusCode::INVALID_ARGUMENT, "texts is empty");
  expect_refused(request({"ok", "fine", "\xc3\x28"}), StatusCode::INVALID_ARGUMENT,
                 "texts[2] is not valid UTF-8");
  // Invalid UTF-8 in a string field of the selector: named, not a parser failure inside gRPC.
  expect_refused(request({"ok"}, "en-\xff"), StatusCode::INVALID_ARGUMENT,
                 "model.model is not valid UTF-8");
  auto by_languages = request({"ok"}, "");
  by_languages.mutable_model()->set_source_language("en");
  by_languages.mutable_model()->set_target_language("d\xc3");
  expect_refused(by_languages, StatusCode::INVALID_ARGUMENT,
                 "model.target_language is not valid UTF-8");
  expect_refused(request({"ok", "caf\xc3", "x"}), StatusCode::INVALID_ARGUMENT,
                 "texts[1] is not valid UTF-8");
  expect_refused(request({"\xed\xa0\x80"}), StatusCode::INVALID_ARGUMENT, "not valid UTF-8");
  // U+0000 is valid UTF-8 but no text: refused naming the text, not translated without it.
  expect_refused(request({"ok", std::string("Save\0 the file.", 16)}), StatusCode::INVALID_ARGUMENT,
                 "texts[1] contains U+0000 (NUL)");
  std::string long_text;
  for (int i = 0; i < 40; ++i) long_text += "word ";
  // A text over the input limit is cut into segments that fit, never refused for its length.
  v1::TranslateResponse long_response;
  ASSERT_TRUE(translate(request({long_text}), &long_response).ok());
  EXPECT_GE(long_response.translations(0).segments(), 2u);
  EXPECT_GT(long_response.translations(0).source_tokens(), 32u);
  expect_refused(request(std::vector<std::string>(9, "ok")), StatusCode::INVALID_ARGUMENT,
                 "over the limit of 8 per request");

  auto options = [](auto set) {
    auto r = request({"Save the file."});
    set(*r.mutable_options());
    return r;
  };
  expect_refused(options([](auto& o) { o.set_beam_size(9); }), StatusCode::INVALID_ARGUMENT,
                 "beam_size is 9, over the limit of 8");
  expect_refused(options([](auto& o) {
                   o.set_beam_size(2);
                   o.set_n_best(3);
                 }),
                 StatusCode::INVALID_ARGUMENT, "n_best is 3");
  expect_refused(options([](auto& o) { o.set_max_length(301); }), StatusCode::INVALID_ARGUMENT,
                 "max_length is 301, over the limit of 300");
  expect_refused(options([](auto& o) {
                   o.set_max_length(10);
                   o.set_min_length(11);
                 }),
                 StatusCode::INVALID_ARGUMENT, "min_length is 11");
  expect_refused(options([](auto& o) { o.set_length_penalty(50.0f); }),
                 StatusCode::INVALID_ARGUMENT, "length_penalty");
  expect_refused(
      options([](auto& o) { o.set_length_penalty_type(static_cast<v1::LengthPenaltyType>(42)); }),
      StatusCode::INVALID_ARGUMENT, "length_penalty_type");
  expect_refused(options([](auto& o) { o.set_no_repeat_ngram_size(65); }),
                 StatusCode::INVALID_ARGUMENT, "no_repeat_ngram_size is 65");
  v1::TranslateResponse no_repeats;
  EXPECT_TRUE(translate(options([](auto& o) { o.set_no_repeat_ngram_size(2); }), &no_repeats).ok());

  expect_refused(request({"ok"}, "xx-yy"), StatusCode::NOT_FOUND, "no model named 'xx-yy'");
  v1::TranslateRequest pair = request({"ok"}, "");
  pair.mutable_model()->set_target_language("ja");
  expect_refused(pair, StatusCode::NOT_FOUND, "no model translates *->ja");

  // The server is still healthy after all of that.
  v1::TranslateResponse response;
  EXPECT_TRUE(translate(request({"Save the file."}), &response).ok());
}

TEST_F(ServerApiTest, MetricsCountRequestsByCode) {
  const std::string before = http_get(server_->metrics_port(), "/metrics");
  const std::string ok =
      R"(rpt_requests_total{code="OK",method="Translate",model="en-de",protocol="grpc"})";
  const double ok_before = metric_value(before, ok).value_or(0);
  v1::TranslateResponse response;
  ASSERT_TRUE(translate(request({"Save the file."}), &response).ok());
  const std::string after = http_get(server_->metrics_port(), "/metrics");
  EXPECT_EQ(metric_value(after, ok).value_or(0), ok_before + 1);
  for (const char* name :
       {R"(rpt_request_duration_seconds_count{method="Translate",model="en-de",protocol="grpc"})",
        "rpt_queue_duration_seconds_count{model=\"en-de\"}",
        "rpt_encode_duration_seconds_count{model=\"en-de\"}",
        "rpt_decode_step_duration_seconds_count{model=\"en-de\"}",
        "rpt_deliver_duration_seconds_count{model=\"en-de\"}",
        "rpt_decode_step_rows_count{model=\"en-de\"}", "rpt_source_tokens_total{model=\"en-de\"}",
        "rpt_target_tokens_total{model=\"en-de\"}", "rpt_queue_depth_sentences{model=\"en-de\"}",
        "rpt_active_rows{model=\"en-de\"}"}) {
    EXPECT_TRUE(metric_value(after, name).has_value()) << name;
  }
  EXPECT_THAT(after, HasSubstr("rpt_model_info{device=\"cpu\",dtype=\"float32\",model=\"en-de\""));
  EXPECT_THAT(after, HasSubstr("rpt_device_memory_bytes{device=\"cpu\",model=\"en-de\""));
  // The kernels chosen for this CPU (kernels/cpu_kernels.h), one series of value 1.
  EXPECT_THAT(after, ::testing::ContainsRegex(
                         "\nrpt_cpu_kernels_info\\{float32=\"blis-[^\"]+ (sup|packed) [a-z0-9]+\","
                         "float32_linear=\"(blis-[^\"]+ (sup|packed)|onednn-[^\"]+ packed) "
                         "[a-z0-9_]+\",int8=\"onednn-[^\"]+\",isa=\"[a-z0-9_ ]+\"\\} 1\n"));
  EXPECT_EQ(http_get(server_->metrics_port(), "/other").rfind("not found", 0), 0u);
}

// ListModels names no model: counted under model="_none", kept out of the per-model latency
// histogram (whose recording rule would turn an unfed series into NaN).
TEST_F(ServerApiTest, CallsOfNoModelStayOutOfTheLatencyHistogram) {
  const std::string listed =
      R"(rpt_requests_total{code="OK",method="ListModels",model="_none",protocol="grpc"})";
  const double before =
      metric_value(http_get(server_->metrics_port(), "/metrics"), listed).value_or(0);
  grpc::ClientContext context;
  v1::ListModelsResponse models;
  ASSERT_TRUE(server_->stub()->ListModels(&context, {}, &models).ok());
  const std::string after = http_get(server_->metrics_port(), "/metrics");
  EXPECT_EQ(metric_value(after, listed), before + 1);
  EXPECT_THAT(after, Not(HasSubstr("rpt_request_duration_seconds_count{method=\"ListModels\"")));
}

// rpt-client over stdin: one output line per input line, blank lines kept in place as they came
// (not sent: the server would return them unchanged), the same translations as one call per
// text; CRLF input gives CRLF output, blank lines included.
TEST_F(ServerApiTest, ClientKeepsBlankLinesInPlace) {
  const std::vector<std::string> client = {client_binary(), "--server", server_->address(),
                                           "--model", "en-de"};
  const std::string output = run_binary(client, "Save the file.\n\n   \nCancel\n");
  const std::string first = run_binary(client, "Save the file.\n");
  const std::string last = run_binary(client, "Cancel\n");
  ASSERT_FALSE(first.empty());
  ASSERT_FALSE(last.empty());
  EXPECT_EQ(output, first + "\n   \n" + last);
  const std::string crlf = run_binary(client, "Save the file.\r\n\r\nCancel\r\n");
  EXPECT_EQ(crlf.find("\r\n\r\n"), first.size() - 1) << crlf;  // the blank line's own \r
  std::size_t lines = 0;
  for (std::size_t at = 0; at < crlf.size(); ++at) {
    if (crlf[at] != '\n') continue;
    ++lines;
    EXPECT_TRUE(at > 0 && crlf[at - 1] == '\r') << "a bare LF at " << at << ": " << crlf;
  }
  EXPECT_EQ(lines, 3u);
}

// A client that connects to the metrics port and trickles a byte every 300 ms (never finishing
// its request) must not hold /healthz: the probe is answered while it still trickles.
TEST_F(ServerApiTest, ATricklingClientCannotHoldTheProbes) {
  std::atomic<bool> stop{false};
  std::atomic<bool> gave_up{false};  // the trickler ran its full 10 s
  std::atomic<bool> connected{false};
  std::thread trickler([&] {
    const int fd = connect_loopback(server_->metrics_port());
    connected = fd >= 0;
    for (int i = 0; i < 33 && !stop; ++i) {
      send(fd, "G", 1, MSG_NOSIGNAL);
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
    gave_up = !stop;
    if (fd >= 0) close(fd);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the trickler is served first
  const int status = http_request(server_->metrics_port(), "/healthz").status;
  const bool trickler_still_running = !gave_up;
  stop = true;
  trickler.join();
  EXPECT_TRUE(connected.load());
  EXPECT_EQ(status, 200);
  EXPECT_TRUE(trickler_still_running) << "/healthz waited for the trickling client to give up";
}

}  // namespace
}  // namespace rpt::server_test
