// Open-loop load: calls start at a set rate whatever the server does (Poisson or evenly spaced
// arrivals), as traffic from many independent users does, so a slow server builds a queue
// instead of slowing the load down. Latency runs from each call's scheduled start, not from when
// it was sent, so a late sender cannot hide queueing (no coordinated omission).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "client/load_report.h"
#include "proto/translate.grpc.pb.h"

namespace rpt::client {

struct OpenLoopOptions {
  double rate = 10.0;                // calls per second
  std::string arrivals = "poisson";  // poisson (exponential gaps) | constant
  double warmup_seconds = 0.0;       // calls started before this are not measured
  double duration_seconds = 10.0;    // the measured window, after the warm-up
  double timeout_seconds = 120.0;    // each call's deadline, from its scheduled start
  double slo_seconds = 0.0;          // latency objective for goodput; 0: none
  std::uint64_t seed = 1;            // of the Poisson arrivals
  bool show_progress = true;         // a progress line on stderr, when it is a terminal
};

// The request of the i-th call.
using RequestMaker = std::function<v1::TranslateRequest(long call)>;

// Runs one open-loop load; returns when every call has finished.
LoadResult run_open_loop(v1::Translator::Stub& stub, const RequestMaker& make_request,
                         const OpenLoopOptions& options);

}  // namespace rpt::client
