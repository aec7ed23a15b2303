// Shared by the fuzz targets: the committed fixture model (tests/fixtures/shaw_k4/model) as the
// server sees it, loaded once, and the server's default limits. No engine or scheduler: the
// targets stop where a request would be queued.
#pragma once

#include "server/model_registry.h"
#include "server/server_options.h"

namespace rpt::fuzz {

const server::ServedModel& fuzz_model();
const server::ServerOptions& fuzz_options();

}  // namespace rpt::fuzz
