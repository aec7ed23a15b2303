// What rpt-loadgen measures in one run (closed loop, or open loop at one offered rate), and its
// JSON and CSV forms (one object, or one row, per run). The same for both protocols.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "client/call_outcome.h"

namespace rpt::client {

struct LoadResult {
  // A run in `mode` of calls of `texts_per_call` texts, goodput counted against `slo_seconds`.
  LoadResult(std::string run_mode, int texts_in_a_call, double slo)
      : mode(std::move(run_mode)), texts_per_call(texts_in_a_call), slo_seconds(slo) {}

  std::string mode;         // "closed" or "open"
  double offered_rate = 0;  // open loop: calls per second asked for
  std::string arrivals;     // open loop: poisson | constant
  int concurrency = 0;      // closed loop: calls in flight
  int texts_per_call = 1;
  double seconds = 0;      // the measured window (the warm-up excluded)
  double slo_seconds = 0;  // 0: no objective
  long calls = 0;          // calls measured
  long sentences = 0;      // translated by OK calls
  long target_tokens = 0;
  long within_slo = 0;            // OK calls answered within the objective
  std::vector<double> latencies;  // seconds per measured call, any status
  std::map<std::string, long> codes;

  // Adds one finished call. `latency_seconds` runs from the call's (scheduled) start.
  void record(double latency_seconds, const CallOutcome& outcome);
  bool all_ok() const { return codes.size() == 1 && codes.count("OK") == 1; }
};

// One JSON object on one line.
std::string to_json(const LoadResult& result);
// CSV: the header line, then one line per result.
std::string csv_header();
std::string to_csv(const LoadResult& result);

}  // namespace rpt::client
