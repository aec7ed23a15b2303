// rpt-loadgen: closed-loop load on an rpt-server. `--concurrency` workers each keep one call in
// flight, sending `--texts-per-call` lines of the input at a time, until every line has been
// translated `--repeat` times. Prints one JSON object: throughput, latency percentiles and status
// counts (for bench/ scripts).
//
//   rpt-loadgen --server localhost:50051 --model en-de --input test.en --concurrency 32
//   rpt-loadgen --server dns:///rpt-pods.default.svc.cluster.local:50051 --lb round_robin ...
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <grpcpp/grpcpp.h>

#include "client/blank_text.h"
#include "client/channel.h"
#include "client/status_names.h"
#include "proto/translate.grpc.pb.h"

namespace {

struct LoadOptions {
  rpt::client::ChannelOptions channel;
  std::string model;
  std::string input;
  int concurrency = 16;
  int texts_per_call = 1;
  int repeat = 1;
  int beam_size = 0;
  double timeout_seconds = 120.0;
};

struct Totals {
  std::mutex mutex;
  std::vector<double> latencies;  // seconds per call
  std::map<std::string, long> codes;
  long sentences = 0;
  long target_tokens = 0;
};

double percentile(std::vector<double>& values, double p) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const auto index = static_cast<std::size_t>(p * static_cast<double>(values.size() - 1));
  return values[index];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"rpt-loadgen: closed-loop load on an rpt-server"};
  LoadOptions o;
  rpt::client::add_channel_options(app, o.channel);
  app.add_option("--model", o.model, "Model name");
  app.add_option("--input", o.input, "Source sentences, one per line")->required();
  app.add_option("--concurrency", o.concurrency, "Calls in flight")->check(CLI::Range(1, 4096));
  app.add_option("--texts-per-call", o.texts_per_call, "Texts per Translate call")
      ->check(CLI::Range(1, 4096));
  app.add_option("--repeat", o.repeat, "Times every line is sent")->check(CLI::Range(1, 1000));
  app.add_option("--beam-size", o.beam_size, "Beam size (0: server default)")
      ->check(CLI::Range(0, 1024));
  app.add_option("--timeout", o.timeout_seconds, "Deadline per call in seconds")
      ->check(CLI::Range(0.001, 86400.0));
  CLI11_PARSE(app, argc, argv);

  std::vector<std::string> lines;
  std::ifstream in(o.input);
  for (std::string line; std::getline(in, line);) {
    if (!rpt::client::is_blank(line)) lines.push_back(line);
  }
  if (lines.empty()) {
    std::cerr << "rpt-loadgen: no input lines in " << o.input << "\n";
    return 2;
  }
  const long total = static_cast<long>(lines.size()) * o.repeat;
  std::atomic<long> next{0};
  Totals totals;
  auto stub = rpt::v1::Translator::NewStub(rpt::client::make_channel(o.channel));

  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> workers;
  for (int w = 0; w < o.concurrency; ++w) {
    workers.emplace_back([&] {
      while (true) {
        const long first = next.fetch_add(o.texts_per_call);
        if (first >= total) return;
        rpt::v1::TranslateRequest request;
        request.mutable_model()->set_model(o.model);
        request.mutable_options()->set_beam_size(static_cast<std::uint32_t>(o.beam_size));
        for (long i = first; i < std::min(total, first + o.texts_per_call); ++i) {
          request.add_texts(lines[static_cast<std::size_t>(i) % lines.size()]);
        }
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() +
                             std::chrono::milliseconds(static_cast<long>(o.timeout_seconds * 1e3)));
        rpt::v1::TranslateResponse response;
        const auto sent = std::chrono::steady_clock::now();
        const grpc::Status status = stub->Translate(&context, request, &response);
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count();
        std::lock_guard lock(totals.mutex);
        totals.latencies.push_back(seconds);
        ++totals.codes[std::string(rpt::client::status_name(status.error_code()))];
        if (status.ok()) {
          totals.sentences += response.translations_size();
          for (const auto& t : response.translations()) totals.target_tokens += t.target_tokens();
        }
      }
    });
  }
  for (auto& worker : workers) worker.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::string codes;
  for (const auto& [code, count] : totals.codes) {
    codes += (codes.empty() ? "" : ", ") + ("\"" + code + "\": " + std::to_string(count));
  }
  std::printf(
      "{\"seconds\": %.3f, \"sentences\": %ld, \"target_tokens\": %ld, \"sentences_per_second\": "
      "%.2f, \"target_tokens_per_second\": %.1f, \"latency_p50\": %.4f, \"latency_p90\": %.4f, "
      "\"latency_p99\": %.4f, \"concurrency\": %d, \"texts_per_call\": %d, \"codes\": {%s}}\n",
      seconds, totals.sentences, totals.target_tokens, totals.sentences / seconds,
      totals.target_tokens / seconds, percentile(totals.latencies, 0.5),
      percentile(totals.latencies, 0.9), percentile(totals.latencies, 0.99), o.concurrency,
      o.texts_per_call, codes.c_str());
  return totals.codes.size() == 1 && totals.codes.count("OK") ? 0 : 1;
}
