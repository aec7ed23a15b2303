// Client-side round robin: rpt-loadgen with --lb round_robin over a target that resolves to two
// rpt-servers spreads its calls over both (counted on each server's /metrics); with gRPC's
// default pick_first one server takes them all. rpt-client and the Python client take a
// dns:/// target with round_robin.
#include <algorithm>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "server_process.h"

namespace rpt::server_test {
namespace {

constexpr int kCalls = 45;  // 15 times the 3 input lines

class RoundRobinTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    for (auto& server : servers_) {
      server = std::make_unique<ServerProcess>(
          std::vector<std::string>{"--model", "en-de=" + fixture_model()});
    }
    input_ = make_temp_dir("rpt_round_robin_") + "/input.txt";
    std::ofstream(input_) << "Save the file.\nCancel\nOpen a window.\n";
  }
  static void TearDownTestSuite() {
    for (auto& server : servers_) server.reset();
  }

  // Both servers as one gRPC target (the static resolver: what DNS gives for a headless Service).
  static std::string both_servers() {
    return "ipv4:" + servers_[0]->address() + "," + servers_[1]->address();
  }

  static double translate_calls(const ServerProcess& server) {
    constexpr const char* kOkCalls =
        R"(rpt_requests_total{code="OK",method="Translate",model="en-de",protocol="grpc"})";
    return metric_value(http_get(server.metrics_port(), "/metrics"), kOkCalls).value_or(0);
  }

  // Calls answered by each server while rpt-loadgen runs kCalls calls with policy `lb`.
  static std::vector<double> calls_per_server(const std::string& lb) {
    const double before[] = {translate_calls(*servers_[0]), translate_calls(*servers_[1])};
    run_binary({loadgen_binary(), "--server", both_servers(), "--lb", lb, "--model", "en-de",
                "--input", input_, "--repeat", std::to_string(kCalls / 3), "--concurrency", "1"},
               "");
    return {translate_calls(*servers_[0]) - before[0], translate_calls(*servers_[1]) - before[1]};
  }

  static inline std::unique_ptr<ServerProcess> servers_[2];
  static inline std::string input_;
};

TEST_F(RoundRobinTest, RoundRobinSpreadsCallsOverBothServers) {
  const std::vector<double> calls = calls_per_server("round_robin");
  EXPECT_EQ(calls[0] + calls[1], kCalls);
  // Calls alternate once both connections are up; the first may all go to the first one ready.
  EXPECT_GE(calls[0], kCalls / 4);
  EXPECT_GE(calls[1], kCalls / 4);
}

TEST_F(RoundRobinTest, PickFirstSendsEveryCallToOneServer) {
  const std::vector<double> calls = calls_per_server("pick_first");
  EXPECT_EQ(std::max(calls[0], calls[1]), kCalls);
  EXPECT_EQ(std::min(calls[0], calls[1]), 0);
}

TEST_F(RoundRobinTest, ClientsTakeADnsTargetWithRoundRobin) {
  const std::string target = "dns:///localhost:" + std::to_string(servers_[0]->grpc_port());
  const std::string expected = run_binary(
      {client_binary(), "--server", servers_[0]->address(), "--model", "en-de", "Cancel"}, "");
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(run_binary({client_binary(), "--server", target, "--lb", "round_robin", "--model",
                        "en-de", "Cancel"},
                       ""),
            expected);
  const std::string python =
      run_binary({"/usr/bin/python3", source_dir() + "/client/python/translate_client.py",
                  "--server", target, "--lb", "round_robin", "--model", "en-de", "Cancel"},
                 "");
  EXPECT_NE(python.find(expected.substr(0, expected.size() - 1)), std::string::npos) << python;
}

}  // namespace
}  // namespace rpt::server_test
