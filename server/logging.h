// spdlog setup for rpt-server: plain lines or one JSON object per line, to stderr.
#pragma once

#include <string>

namespace rpt::server {

// `level`: trace, debug, info, warn, error, critical or off.
void configure_logging(const std::string& level, bool json);

}  // namespace rpt::server
