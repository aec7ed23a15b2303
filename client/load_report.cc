#include "client/load_report.h"

#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

namespace rpt::client {
namespace {

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  return values[static_cast<std::size_t>(p * static_cast<double>(values.size() - 1))];
}

double per_second(long count, double seconds) {
  return seconds > 0 ? static_cast<double>(count) / seconds : 0.0;
}

}  // namespace

void LoadResult::record(double latency_seconds, const CallOutcome& outcome) {
  ++calls;
  latencies.push_back(latency_seconds);
  ++codes[outcome.code];
  if (!outcome.ok()) return;
  if (slo_seconds <= 0 || latency_seconds <= slo_seconds) ++within_slo;
  sentences += outcome.sentences;
  target_tokens += outcome.target_tokens;
}

std::string to_json(const LoadResult& r) {
  nlohmann::ordered_json json = {
      {"mode", r.mode},
      {"seconds", r.seconds},
      {"calls", r.calls},
      {"sentences", r.sentences},
      {"target_tokens", r.target_tokens},
      {"calls_per_second", per_second(r.codes.count("OK") ? r.codes.at("OK") : 0, r.seconds)},
      {"sentences_per_second", per_second(r.sentences, r.seconds)},
      {"target_tokens_per_second", per_second(r.target_tokens, r.seconds)},
      {"latency_p50", percentile(r.latencies, 0.5)},
      {"latency_p90", percentile(r.latencies, 0.9)},
      {"latency_p99", percentile(r.latencies, 0.99)},
      {"texts_per_call", r.texts_per_call},
      {"codes", r.codes}};
  if (r.mode == "open") {
    json["offered_rate"] = r.offered_rate;
    json["arrivals"] = r.arrivals;
  } else {
    json["concurrency"] = r.concurrency;
  }
  if (r.slo_seconds > 0) {
    json["slo_ms"] = r.slo_seconds * 1e3;
    json["goodput"] = per_second(r.within_slo, r.seconds);  // OK calls within the SLO per second
  }
  return json.dump();
}

std::string csv_header() {
  return "mode,offered_rate,concurrency,seconds,calls,ok_calls,calls_per_second,"
         "sentences_per_second,latency_p50,latency_p90,latency_p99,slo_ms,goodput\n";
}

std::string to_csv(const LoadResult& r) {
  const long ok = r.codes.count("OK") ? r.codes.at("OK") : 0;
  char line[512];
  std::snprintf(line, sizeof line, "%s,%.3f,%d,%.3f,%ld,%ld,%.3f,%.3f,%.6f,%.6f,%.6f,%.1f,%.3f\n",
                r.mode.c_str(), r.offered_rate, r.concurrency, r.seconds, r.calls, ok,
                per_second(ok, r.seconds), per_second(r.sentences, r.seconds),
                percentile(r.latencies, 0.5), percentile(r.latencies, 0.9),
                percentile(r.latencies, 0.99), r.slo_seconds * 1e3,
                per_second(r.within_slo, r.seconds));
  return line;
}

}  // namespace rpt::client
