// rpt-loadgen: load on an rpt-server. Prints one JSON object per run (--format csv: a header and
// one row per run): throughput, latency percentiles, status counts and, with --slo-ms, goodput.
//
// Closed loop (default): `--concurrency` workers each keep one call in flight, sending
// `--texts-per-call` lines of the input at a time, until every line has been translated
// `--repeat` times.
// Open loop (--rate R, or --rates R1,R2,... for one run per rate): calls start at R per second
// (--arrivals poisson|constant) whatever the server does, for --warmup then --duration seconds;
// latency runs from each call's scheduled start (client/open_loop.h), each call has --timeout
// from then, and goodput counts the OK calls per second answered within --slo-ms; on a terminal
// a progress line shows each run (--quiet: none). Refusals and deadlines under overload are
// results, not failures: the exit status is 0 once the runs end.
//
//   rpt-loadgen --server localhost:50051 --model en-de --input test.en --concurrency 32
//   rpt-loadgen --server localhost:50051 --model en-de --input test.en --rates 5,10,20
//       --duration 30 --warmup 5 --slo-ms 500 --format csv
//   rpt-loadgen --server dns:///rpt-pods.default.svc.cluster.local:50051 --lb round_robin ...
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <grpcpp/grpcpp.h>

#include "client/blank_text.h"
#include "client/channel.h"
#include "client/load_report.h"
#include "client/open_loop.h"
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
  std::vector<double> rates;  // open loop when set
  rpt::client::OpenLoopOptions open_loop;
  double slo_ms = 0.0;
  std::string format = "json";
};

// Translate requests of `texts_per_call` consecutive lines, the input read round and round.
class Requests {
 public:
  Requests(const LoadOptions& options, std::vector<std::string> lines)
      : options_(options), lines_(std::move(lines)) {}

  std::size_t lines() const { return lines_.size(); }
  // Texts [first, first + count) of the endless input.
  rpt::v1::TranslateRequest make(long first, long count) const {
    rpt::v1::TranslateRequest request;
    request.mutable_model()->set_model(options_.model);
    request.mutable_options()->set_beam_size(static_cast<std::uint32_t>(options_.beam_size));
    for (long i = first; i < first + count; ++i) {
      request.add_texts(lines_[static_cast<std::size_t>(i) % lines_.size()]);
    }
    return request;
  }

 private:
  const LoadOptions& options_;
  std::vector<std::string> lines_;
};

rpt::client::LoadResult run_closed_loop(rpt::v1::Translator::Stub& stub, const Requests& requests,
                                        const LoadOptions& o) {
  const long total = static_cast<long>(requests.lines()) * o.repeat;
  std::atomic<long> next{0};
  std::mutex mutex;
  rpt::client::LoadResult result;
  result.mode = "closed";
  result.concurrency = o.concurrency;
  result.texts_per_call = o.texts_per_call;
  result.slo_seconds = o.slo_ms / 1e3;
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> workers;
  for (int w = 0; w < o.concurrency; ++w) {
    workers.emplace_back([&] {
      while (true) {
        const long first = next.fetch_add(o.texts_per_call);
        if (first >= total) return;
        const auto request = requests.make(first, std::min<long>(o.texts_per_call, total - first));
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() +
                             std::chrono::milliseconds(
                                 static_cast<long>(o.open_loop.timeout_seconds * 1e3)));
        rpt::v1::TranslateResponse response;
        const auto sent = std::chrono::steady_clock::now();
        const grpc::Status status = stub.Translate(&context, request, &response);
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count();
        std::lock_guard lock(mutex);
        result.record(seconds, status, response);
      }
    });
  }
  for (auto& worker : workers) worker.join();
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

void print(const rpt::client::LoadResult& result, const std::string& format) {
  std::fputs(format == "csv" ? rpt::client::to_csv(result).c_str()
                             : (rpt::client::to_json(result) + "\n").c_str(),
             stdout);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"rpt-loadgen: closed- or open-loop load on an rpt-server"};
  LoadOptions o;
  rpt::client::add_channel_options(app, o.channel);
  app.add_option("--model", o.model, "Model name");
  app.add_option("--input", o.input, "Source sentences, one per line")->required();
  app.add_option("--concurrency", o.concurrency, "Closed loop: calls in flight")
      ->check(CLI::Range(1, 4096));
  app.add_option("--texts-per-call", o.texts_per_call, "Texts per Translate call")
      ->check(CLI::Range(1, 4096));
  app.add_option("--repeat", o.repeat, "Closed loop: times every line is sent")
      ->check(CLI::Range(1, 1000));
  app.add_option("--beam-size", o.beam_size, "Beam size (0: server default)")
      ->check(CLI::Range(0, 1024));
  app.add_option("--timeout", o.open_loop.timeout_seconds,
                 "Deadline per call in seconds (open loop: from its scheduled start)")
      ->check(CLI::Range(0.001, 86400.0))
      ->capture_default_str();
  auto* rate = app.add_option_function<double>(
                      "--rate", [&o](double r) { o.rates = {r}; },
                      "Open loop: calls started per second")
                   ->check(CLI::Range(0.001, 1e6));
  app.add_option("--rates", o.rates, "Open loop: one run per rate, e.g. 5,10,20")
      ->delimiter(',')
      ->check(CLI::Range(0.001, 1e6))
      ->excludes(rate);
  app.add_option("--arrivals", o.open_loop.arrivals,
                 "Open loop: poisson (independent users) or constant (evenly spaced)")
      ->check(CLI::IsMember({"poisson", "constant"}))
      ->capture_default_str();
  app.add_option("--duration", o.open_loop.duration_seconds, "Open loop: seconds measured per rate")
      ->check(CLI::Range(0.001, 86400.0))
      ->capture_default_str();
  app.add_option("--warmup", o.open_loop.warmup_seconds,
                 "Open loop: seconds of load before measuring, per rate")
      ->check(CLI::Range(0.0, 86400.0))
      ->capture_default_str();
  app.add_option("--seed", o.open_loop.seed, "Open loop: seed of the Poisson arrivals")
      ->capture_default_str();
  app.add_option("--slo-ms", o.slo_ms, "Latency objective in ms: goodput counts OK calls within it")
      ->check(CLI::Range(0.0, 1e9));
  bool quiet = false;
  app.add_flag("--quiet", quiet,
               "Open loop: no progress line on stderr (shown only on a terminal)");
  app.add_option("--format", o.format, "json (one object per line) or csv")
      ->check(CLI::IsMember({"json", "csv"}))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  o.open_loop.slo_seconds = o.slo_ms / 1e3;
  o.open_loop.show_progress = !quiet;

  std::vector<std::string> lines;
  std::ifstream in(o.input);
  for (std::string line; std::getline(in, line);) {
    if (!rpt::client::is_blank(line)) lines.push_back(line);
  }
  if (lines.empty()) {
    std::cerr << "rpt-loadgen: no input lines in " << o.input << "\n";
    return 2;
  }
  const Requests requests(o, std::move(lines));
  auto stub = rpt::v1::Translator::NewStub(rpt::client::make_channel(o.channel));
  if (o.format == "csv") std::fputs(rpt::client::csv_header().c_str(), stdout);

  if (o.rates.empty()) {
    const rpt::client::LoadResult result = run_closed_loop(*stub, requests, o);
    print(result, o.format);
    return result.all_ok() ? 0 : 1;
  }
  const long per_call = o.texts_per_call;
  for (const double r : o.rates) {
    rpt::client::OpenLoopOptions options = o.open_loop;
    options.rate = r;
    rpt::client::LoadResult result = run_open_loop(
        *stub, [&](long call) { return requests.make(call * per_call, per_call); }, options);
    result.texts_per_call = o.texts_per_call;
    print(result, o.format);
  }
  return 0;
}
