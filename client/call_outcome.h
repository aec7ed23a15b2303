// How one Translate call of rpt-loadgen ended, whatever the protocol: what LoadResult counts.
#pragma once

#include <string>

namespace rpt::client {

struct CallOutcome {
  // The gRPC status code name: OK, RESOURCE_EXHAUSTED, DEADLINE_EXCEEDED, UNAVAILABLE, ... (an
  // HTTP answer's status mapped back to it: client/http_outcome.h).
  std::string code = "OK";
  long sentences = 0;      // translations in an OK answer
  long target_tokens = 0;  // of their best hypotheses

  bool ok() const { return code == "OK"; }
};

}  // namespace rpt::client
