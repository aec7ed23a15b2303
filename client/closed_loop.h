// Closed-loop load: a fixed number of calls in flight, the next one sent as soon as one ends, until
// every line of the input has been translated `repeat` times. It measures what the server does at
// that concurrency; latency runs from when each call is sent.
#pragma once

#include "client/caller.h"
#include "client/corpus.h"
#include "client/load_report.h"

namespace rpt::client {

struct ClosedLoopOptions {
  int concurrency = 16;  // calls in flight
  int repeat = 1;        // times every line is sent
};

// Returns when every call has ended.
LoadResult run_closed_loop(Caller& caller, const Corpus& corpus, const CallOptions& calls,
                           const ClosedLoopOptions& options);

}  // namespace rpt::client
