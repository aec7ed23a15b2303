// rpt-loadgen: load on an rpt-server over gRPC or its HTTP JSON API. Prints one JSON object per
// run (--format csv: a header and one row per run): throughput, latency percentiles, status
// counts and, with --slo-ms, goodput.
//
// --protocol grpc (default): Translate on the gRPC port, --server any gRPC target.
// --protocol http: POST /v1/translate on the HTTP port (--metrics-port), --server HOST:PORT or
// http://HOST:PORT (client/http_caller.h). Both protocols run the same loops and are counted
// alike: an HTTP status counts under the gRPC code name the server maps to it (429
// RESOURCE_EXHAUSTED, 504 DEADLINE_EXCEEDED, ...), so the two can be compared run for run.
//
// Closed loop (default): `--concurrency` calls in flight, each of `--texts-per-call` lines of the
// input, until every line has been translated `--repeat` times; exit status 1 unless every call
// was OK.
// Open loop (--rate R, or --rates R1,R2,... for one run per rate): calls start at R per second
// (--arrivals poisson|constant) whatever the server does, for --warmup then --duration seconds;
// latency runs from each call's scheduled start (client/open_loop.h), each call has --timeout
// from then, and goodput counts the OK calls per second answered within --slo-ms; on a terminal
// a progress line shows each run (--quiet: none). Refusals and deadlines under overload are
// results, not failures: the exit status is 0 once the runs end. Bad options or an empty input:
// exit status 2.
//
//   rpt-loadgen --server localhost:50051 --model en-de --input test.en --concurrency 32
//   rpt-loadgen --server localhost:50051 --model en-de --input test.en --rates 5,10,20
//       --duration 30 --warmup 5 --slo-ms 500 --format csv
//   rpt-loadgen --protocol http --server localhost:9464 --model en-de --input test.en --rate 20
//       --api-key "$RPT_API_KEY"
//   rpt-loadgen --server dns:///rpt-pods.default.svc.cluster.local:50051 --lb round_robin ...
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "client/api_key.h"
#include "client/channel.h"
#include "client/closed_loop.h"
#include "client/corpus.h"
#include "client/grpc_caller.h"
#include "client/http_caller.h"
#include "client/load_report.h"
#include "client/open_loop.h"
#include "common/default_ports.h"

namespace {

struct LoadOptions {
  std::string protocol = "grpc";
  rpt::client::ChannelOptions channel;  // .server is the HTTP port's HOST:PORT with http
  rpt::client::TranslateSettings translate;
  rpt::client::ApiKeyOptions api_key;
  std::string input;
  rpt::client::CallOptions calls;
  rpt::client::ClosedLoopOptions closed_loop;
  std::vector<double> rates;  // open loop when set
  rpt::client::OpenLoopOptions open_loop;
  double slo_ms = 0.0;
  std::string format = "json";
};

void print(const rpt::client::LoadResult& result, const std::string& format) {
  std::fputs(format == "csv" ? rpt::client::to_csv(result).c_str()
                             : (rpt::client::to_json(result) + "\n").c_str(),
             stdout);
  std::fflush(stdout);
}

// The caller for --protocol; nullptr, after a message, for a --server it cannot use.
std::unique_ptr<rpt::client::Caller> make_caller(const LoadOptions& o) {
  if (o.protocol == "grpc") {
    return std::make_unique<rpt::client::GrpcCaller>(rpt::client::make_channel(o.channel),
                                                     o.translate);
  }
  const std::optional<std::string> url = rpt::client::http_translate_url(o.channel.server);
  if (!url.has_value()) {
    std::cerr << "rpt-loadgen: --protocol http needs --server HOST:PORT or http://HOST:PORT, not "
              << o.channel.server << "\n";
    return nullptr;
  }
  return std::make_unique<rpt::client::HttpCaller>(*url, o.translate);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"rpt-loadgen: closed- or open-loop load on an rpt-server, over gRPC or HTTP"};
  LoadOptions o;
  app.add_option("--protocol", o.protocol,
                 "grpc (Translate on the gRPC port) or http (POST /v1/translate on the HTTP port)")
      ->check(CLI::IsMember({"grpc", "http"}))
      ->capture_default_str();
  rpt::client::add_channel_options(app, o.channel);
  app.get_option("--server")
      ->description(
          "grpc: any gRPC target, HOST:PORT, dns:///NAME:PORT (every address NAME "
          "resolves to), ...; http: HOST:PORT or http://HOST:PORT of the HTTP port "
          "(default localhost:9464)");
  app.get_option("--lb")->description(app.get_option("--lb")->get_description() + " (grpc only)");
  app.add_option("--model", o.translate.model, "Model name");
  app.add_option("--input", o.input, "Source sentences, one per line")->required();
  rpt::client::add_api_key_options(app, o.api_key);
  app.add_option("--concurrency", o.closed_loop.concurrency, "Closed loop: calls in flight")
      ->check(CLI::Range(1, 4096));
  app.add_option("--texts-per-call", o.calls.texts_per_call, "Texts per Translate call")
      ->check(CLI::Range(1, 4096));
  app.add_option("--repeat", o.closed_loop.repeat, "Closed loop: times every line is sent")
      ->check(CLI::Range(1, 1000));
  app.add_option("--beam-size", o.translate.beam_size, "Beam size (0: server default)")
      ->check(CLI::Range(0, 1024));
  app.add_option("--timeout", o.calls.timeout_seconds,
                 "Deadline per call in seconds (open loop: from its scheduled start)")
      ->check(CLI::Range(0.001, 86400.0))
      ->capture_default_str();
  auto* rate =
      app.add_option_function<double>(
             "--rate", [&o](double r) { o.rates = {r}; }, "Open loop: calls started per second")
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
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error) == 0 ? 0 : 2;  // prints the message (or --help); CLI11's codes folded
  }
  try {
    o.translate.api_key = rpt::client::api_key(o.api_key);
  } catch (const std::runtime_error& error) {
    std::cerr << "rpt-loadgen: " << error.what() << "\n";
    return 2;
  }
  o.calls.slo_seconds = o.slo_ms / 1e3;
  o.open_loop.show_progress = !quiet;

  const rpt::client::Corpus corpus = rpt::client::Corpus::read(o.input);
  if (corpus.lines() == 0) {
    std::cerr << "rpt-loadgen: no input lines in " << o.input << "\n";
    return 2;
  }
  if (o.protocol == "http") {
    if (app.count("--lb") > 0) {
      std::cerr << "rpt-loadgen: --lb is for --protocol grpc\n";
      return 2;
    }
    if (app.count("--server") == 0) {
      o.channel.server = "localhost:" + std::to_string(rpt::kDefaultHttpPort);
    }
  }
  const std::unique_ptr<rpt::client::Caller> caller = make_caller(o);
  if (!caller) return 2;
  if (o.format == "csv") std::fputs(rpt::client::csv_header().c_str(), stdout);

  if (o.rates.empty()) {
    const rpt::client::LoadResult result = run_closed_loop(*caller, corpus, o.calls, o.closed_loop);
    print(result, o.format);
    return result.all_ok() ? 0 : 1;
  }
  for (const double r : o.rates) {
    rpt::client::OpenLoopOptions options = o.open_loop;
    options.rate = r;
    print(run_open_loop(*caller, corpus, o.calls, options), o.format);
  }
  return 0;
}
