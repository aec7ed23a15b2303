// Compute types in rpt-server: one model served in int8 beside a float32 one
// (--model-compute-type), described as such by ListModels and translating; and the refusals at
// start, each naming the flag.
#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server_process.h"

namespace rpt::server_test {
namespace {

using ::testing::HasSubstr;

TEST(ServerComputeType, ServesOneModelInInt8BesideFloat32) {
  ServerProcess server({"--model", "en-de=" + fixture_model(), "--model",
                        "en-de-int8=" + fixture_model(), "--model-compute-type",
                        "en-de-int8=int8"});
  grpc::ClientContext context;
  v1::ListModelsResponse models;
  ASSERT_TRUE(server.stub()->ListModels(&context, {}, &models).ok());
  ASSERT_EQ(models.models_size(), 2);
  EXPECT_EQ(models.models(0).dtype(), "float32");
  EXPECT_EQ(models.models(1).name(), "en-de-int8");
  EXPECT_EQ(models.models(1).dtype(), "int8");
  const std::string metrics = http_get(server.metrics_port(), "/metrics");
  const auto weights = [&metrics](const std::string& model) {
    return metric_value(
        metrics, "rpt_device_memory_bytes{device=\"cpu\",model=\"" + model + "\",use=\"weights\"}");
  };
  ASSERT_TRUE(weights("en-de").has_value()) << metrics;
  ASSERT_TRUE(weights("en-de-int8").has_value());
  EXPECT_LT(*weights("en-de-int8"), *weights("en-de"));

  v1::TranslateRequest request;
  request.mutable_model()->set_model("en-de-int8");
  request.add_texts("Open the file");
  request.add_texts("Save %s as");
  v1::TranslateResponse response;
  const auto call = context_with_deadline(30);
  const grpc::Status status = server.stub()->Translate(call.get(), request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(response.translations_size(), 2);
  for (const auto& result : response.translations()) {
    ASSERT_GE(result.hypotheses_size(), 1);
    EXPECT_FALSE(result.hypotheses(0).text().empty());
  }
}

TEST(ServerComputeType, RefusesWhatTheDeviceCannotDoAtStart) {
  struct Case {
    std::vector<std::string> flags;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"--device", "cuda", "--compute-type", "int8"}, "--compute-type int8 (model en-de)"},
      {{"--compute-type", "float16"}, "--compute-type float16 (model en-de) needs --device cuda"},
      {{"--model-compute-type", "fr=int8"}, "--model-compute-type names no --model: 'fr'"},
      {{"--model-compute-type", "en-de=int4"}, "expected float32, float16, bfloat16 or int8"},
      {{"--model-compute-type", "en-de"}, "wants NAME=TYPE"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> arguments = {"--model", "en-de=" + fixture_model()};
    arguments.insert(arguments.end(), c.flags.begin(), c.flags.end());
    try {
      ServerProcess server(arguments);
      ADD_FAILURE() << "rpt-server started with " << c.flags[0] << " " << c.flags[1];
    } catch (const std::runtime_error& error) {
      EXPECT_THAT(error.what(), HasSubstr("exited at start"));
      EXPECT_THAT(error.what(), HasSubstr(c.message));
    }
  }
}

}  // namespace
}  // namespace rpt::server_test
