// A real Prometheus (Debian's `prometheus` binary) scrapes rpt-server's /metrics, and a PromQL
// query over Prometheus' HTTP API returns the number of requests the test sent.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "server_process.h"

extern char** environ;

namespace rpt::server_test {
namespace {

std::string find_prometheus() {
  for (const char* candidate : {"/usr/bin/prometheus", "/usr/local/bin/prometheus"}) {
    if (access(candidate, X_OK) == 0) return candidate;
  }
  return {};
}

// Prometheus as a child process; stopped at destruction.
class PrometheusProcess {
 public:
  PrometheusProcess(const std::string& binary, int port, int target_port)
      : directory_(make_temp_dir("rpt_prometheus_")) {
    const std::string config = directory_ + "/prometheus.yml";
    std::ofstream(config) << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                             "scrape_configs:\n  - job_name: rpt\n    static_configs:\n"
                             "      - targets: ['127.0.0.1:"
                          << target_port << "']\n";
    std::vector<std::string> argv = {
        binary, "--config.file=" + config, "--storage.tsdb.path=" + directory_ + "/data",
        "--web.listen-address=127.0.0.1:" + std::to_string(port), "--log.level=warn"};
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    const std::string log = directory_ + "/prometheus.log";
    posix_spawn_file_actions_addopen(&actions, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn(&pid_, binary.c_str(), &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
  }
  ~PrometheusProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
    std::filesystem::remove_all(directory_);
  }
  PrometheusProcess(const PrometheusProcess&) = delete;
  PrometheusProcess& operator=(const PrometheusProcess&) = delete;

 private:
  std::string directory_;
  pid_t pid_ = -1;
};

// Percent-encodes a PromQL query for a URL.
std::string url_encode(const std::string& text) {
  std::string out;
  for (const unsigned char c : text) {
    if (std::isalnum(c) || c == '_' || c == '.' || c == '-') {
      out.push_back(static_cast<char>(c));
    } else {
      char escaped[4];
      std::snprintf(escaped, sizeof(escaped), "%%%02X", c);
      out += escaped;
    }
  }
  return out;
}

TEST(PrometheusTest, ScrapesTheRequestCount) {
  const std::string prometheus = find_prometheus();
  if (prometheus.empty()) GTEST_SKIP() << "no prometheus binary (Debian package `prometheus`)";

  ServerProcess server({"--model", "en-de=" + fixture_model()});
  const int port = free_port();
  PrometheusProcess scraper(prometheus, port, server.metrics_port());

  constexpr int kRequests = 7;
  auto stub = server.stub();
  for (int i = 0; i < kRequests; ++i) {
    v1::TranslateRequest request;
    request.mutable_model()->set_model("en-de");
    request.add_texts(i % 2 ? "Save the file." : "Open a new window.");
    v1::TranslateResponse response;
    auto context = context_with_deadline(30);
    ASSERT_TRUE(stub->Translate(context.get(), request, &response).ok());
  }

  const std::string query =
      R"(sum(rpt_requests_total{job="rpt",method="Translate",code="OK",model="en-de"}))";
  double seen = -1;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < give_up) {
    const std::string body = http_get(port, "/api/v1/query?query=" + url_encode(query));
    if (!body.empty()) {
      const auto json = nlohmann::json::parse(body, nullptr, false);
      if (!json.is_discarded() && json.value("status", "") == "success" &&
          !json["data"]["result"].empty()) {
        seen = std::stod(json["data"]["result"][0]["value"][1].get<std::string>());
        if (seen == kRequests) break;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  EXPECT_EQ(seen, kRequests) << "Prometheus did not report the requests sent";
}

}  // namespace
}  // namespace rpt::server_test
