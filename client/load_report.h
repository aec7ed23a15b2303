// What rpt-loadgen measures in one run (closed loop, or open loop at one offered rate), and its
// JSON and CSV forms (one object, or one row, per run).
#pragma once

#include <map>
#include <string>
#include <vector>

#include <grpcpp/support/status.h>

#include "proto/translate.pb.h"

namespace rpt::client {

struct LoadResult {
  std::string mode;           // "closed" or "open"
  double offered_rate = 0;    // open loop: calls per second asked for
  std::string arrivals;       // open loop: poisson | constant
  int concurrency = 0;        // closed loop: calls in flight
  int texts_per_call = 1;
  double seconds = 0;         // the measured window (the warm-up excluded)
  double slo_seconds = 0;     // 0: no objective
  long calls = 0;             // calls measured
  long sentences = 0;         // translated by OK calls
  long target_tokens = 0;
  long within_slo = 0;        // OK calls answered within the objective
  std::vector<double> latencies;  // seconds per measured call, any status
  std::map<std::string, long> codes;

  // Adds one finished call. `latency_seconds` runs from the call's (scheduled) start.
  void record(double latency_seconds, const grpc::Status& status,
              const v1::TranslateResponse& response);
  bool all_ok() const { return codes.size() == 1 && codes.count("OK") == 1; }
};

// One JSON object on one line.
std::string to_json(const LoadResult& result);
// CSV: the header line, then one line per result.
std::string csv_header();
std::string to_csv(const LoadResult& result);

}  // namespace rpt::client
