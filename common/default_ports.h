// The ports rpt-server listens on by default, shared with the clients that reach them (rpt-client,
// its admin verbs, rpt-loadgen), so that a default on one side is the default on the other.
#pragma once

namespace rpt {

// --metrics-port: probes, /metrics, the JSON, LibreTranslate and DeepL APIs, the admin API.
inline constexpr int kDefaultHttpPort = 9464;

}  // namespace rpt
