// rpt-loadgen's open loop against an rpt-server made slow on purpose (one sentence decoding at a
// time, 32 texts per call): arrivals follow the asked rate whatever the server does, and latency
// is measured from each call's scheduled start, so past the server's capacity it grows with the
// queue (no coordinated omission) and goodput falls below the offered rate.
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "server_process.h"

namespace rpt::server_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class LoadgenTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = std::make_unique<ServerProcess>(std::vector<std::string>{
        "--model", "en-de=" + fixture_model(), "--max-active-sentences", "1", "--threads", "1",
        "--max-queued-sentences", "1000000", "--max-queued-tokens", "100000000"});
    input_ = make_temp_dir("rpt_loadgen_") + "/input.txt";
    std::ofstream(input_) << "Open the file\nSave %s as\nQuit\nOpen a window\n";
  }
  static void TearDownTestSuite() { server_.reset(); }

  // One JSON object per line of rpt-loadgen's output.
  static std::vector<nlohmann::json> loadgen(const std::vector<std::string>& options) {
    std::vector<std::string> argv = {loadgen_binary(), "--server", server_->address(), "--model",
                                     "en-de", "--input", input_};
    argv.insert(argv.end(), options.begin(), options.end());
    std::istringstream lines(run_binary(argv, ""));
    std::vector<nlohmann::json> runs;
    for (std::string line; std::getline(lines, line);) runs.push_back(nlohmann::json::parse(line));
    return runs;
  }

  static inline std::unique_ptr<ServerProcess> server_;
  static inline std::string input_;
};

TEST_F(LoadgenTest, OpenLoopLatencyGrowsWithTheQueuePastCapacity) {
  // The server's time per call, one call at a time.
  const double service = loadgen({"--concurrency", "1", "--repeat", "40", "--texts-per-call",
                                  "32"})[0]["latency_p50"];
  const double capacity = 1.0 / service;  // calls per second
  // A loose objective: a shared machine may slow any call a few times over. The heavy rate is 16x
  // the measured capacity: under ctest -j 2 the measurement itself may run 4x slow (seen), and
  // the rate must still be past the server's real capacity.
  const double low = capacity / 4, high = capacity * 16, slo = 10 * service;
  const auto runs = loadgen({"--rates", std::to_string(low) + "," + std::to_string(high),
                             "--arrivals", "constant", "--duration", "1", "--slo-ms",
                             std::to_string(slo * 1e3), "--texts-per-call", "32"});
  ASSERT_EQ(runs.size(), 2u);
  const auto& light = runs[0];
  const auto& heavy = runs[1];
  for (const auto& run : runs) {  // evenly spaced arrivals: rate x duration calls, whatever happens
    EXPECT_NEAR(run["calls"].get<double>(), run["offered_rate"].get<double>() * 1.0, 1.0) << run;
    EXPECT_EQ(run["codes"]["OK"], run["calls"]) << run;
  }
  EXPECT_LT(light["latency_p50"].get<double>(), slo) << light << " service " << service;
  // Nearly every light call meets the objective (compared with the calls made: at a slow
  // server's low rate, e.g. under sanitizers, one second holds a single call).
  EXPECT_GT(light["goodput"].get<double>(), 0.8 * light["calls"].get<double>()) << light;
  // Past the capacity: each call waits behind the ones before it.
  EXPECT_GT(heavy["latency_p90"].get<double>(), 10 * service) << heavy << " service " << service;
  EXPECT_LT(heavy["goodput"].get<double>(), 0.5 * high) << heavy;
}

TEST_F(LoadgenTest, PoissonArrivalsMatchTheRateAndWarmupIsNotMeasured) {
  const auto runs = loadgen({"--rate", "40", "--arrivals", "poisson", "--warmup", "0.5",
                             "--duration", "2", "--texts-per-call", "1", "--seed", "7"});
  ASSERT_EQ(runs.size(), 1u);
  const double expected = 40 * 2;  // the warm-up's calls are not counted
  EXPECT_NEAR(runs[0]["calls"].get<double>(), expected, 4 * std::sqrt(expected)) << runs[0];
  EXPECT_EQ(runs[0]["seconds"], 2.0);
  EXPECT_EQ(runs[0]["arrivals"], "poisson");
}

TEST_F(LoadgenTest, CsvHasAHeaderAndOneRowPerRate) {
  const std::string csv = run_binary(
      {loadgen_binary(), "--server", server_->address(), "--model", "en-de", "--input", input_,
       "--rates", "5,10", "--duration", "0.5", "--format", "csv", "--slo-ms", "1000"},
      "");
  std::istringstream lines(csv);
  std::string header, first, second, extra;
  std::getline(lines, header);
  std::getline(lines, first);
  std::getline(lines, second);
  EXPECT_FALSE(std::getline(lines, extra));
  EXPECT_EQ(header.rfind("mode,offered_rate,", 0), 0u) << csv;
  EXPECT_EQ(first.rfind("open,5.000,", 0), 0u) << csv;
  EXPECT_EQ(second.rfind("open,10.000,", 0), 0u) << csv;
}

TEST_F(LoadgenTest, ProgressLineOnATerminalOnly) {
  const std::string command = loadgen_binary() + " --server " + server_->address() +
                              " --model en-de --input " + input_ +
                              " --rate 20 --duration 1.5 --arrivals constant";
  // script(1) runs the command on a pseudo-terminal and prints what it wrote there.
  const std::string shown = run_binary({"/usr/bin/script", "-qec", command, "/dev/null"}, "");
  EXPECT_THAT(shown, HasSubstr("rpt-loadgen: 20 calls/s offered, "));
  EXPECT_THAT(shown, HasSubstr(" sent, "));
  const std::string quiet = run_binary({"/usr/bin/script", "-qec", command + " --quiet", "/dev/null"}, "");
  EXPECT_THAT(quiet, Not(HasSubstr("calls/s offered")));
  EXPECT_THAT(quiet, HasSubstr("\"offered_rate\":20.0"));
}

}  // namespace
}  // namespace rpt::server_test
