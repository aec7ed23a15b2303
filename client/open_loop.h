// Open-loop load: calls start at a set rate whatever the server does (Poisson or evenly spaced
// arrivals), as traffic from many independent users does, so a slow server builds a queue
// instead of slowing the load down. Latency runs from each call's scheduled start, not from when
// it was sent, so a late sender cannot hide queueing (no coordinated omission).
#pragma once

#include <cstdint>
#include <string>

#include "client/caller.h"
#include "client/corpus.h"
#include "client/load_report.h"

namespace rpt::client {

struct OpenLoopOptions {
  double rate = 10.0;                // calls per second
  std::string arrivals = "poisson";  // poisson (exponential gaps) | constant
  double warmup_seconds = 0.0;       // calls started before this are not measured
  double duration_seconds = 10.0;    // the measured window, after the warm-up
  std::uint64_t seed = 1;            // of the Poisson arrivals
  bool show_progress = true;         // a progress line on stderr, when it is a terminal
};

// Runs one open-loop load, call i translating the corpus's texts_per_call texts from
// i x texts_per_call on; returns when every call has ended.
LoadResult run_open_loop(Caller& caller, const Corpus& corpus, const CallOptions& calls,
                         const OpenLoopOptions& options);

}  // namespace rpt::client
