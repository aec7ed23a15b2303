// rpt-server: serves rpt models over gRPC (proto/translate.proto).
//
//   rpt-server --model en-de=models/en-de --model en-fr=models/en-fr --listen 0.0.0.0:50051
//
// Exits 0 after a drain on SIGTERM/SIGINT (further such signals during the drain are logged and
// ignored: server/stop_signals.h); 1 when something named on the command line fails at start: a
// model, an address, the TLS certificate and key (missing, unreadable or mismatched), the
// --api-keys, --admin-key-file or --glossary files (missing, unreadable or malformed), each named
// in the message; 2 on bad flags (malformed or contradictory values). SIGHUP rereads --api-keys,
// --admin-key-file and the --glossary files.
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "engine/errors.h"
#include "common/process_memory.h"
#include "server/logging.h"
#include "server/server.h"
#include "server/server_options.h"
#include "server/stop_signals.h"

int main(int argc, char** argv) {
  CLI::App app{"rpt-server: translation over gRPC with relative-position Transformer models"};
  rpt::server::ServerOptions options;
  rpt::server::add_server_options(app, options);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    // app.exit prints the message (or --help); CLI11's own codes (105 for a failed check such as
    // a missing --tls-key file) are folded into the 2 promised above.
    return app.exit(error) == 0 ? 0 : 2;
  }
  std::vector<std::string> warnings;
  try {
    warnings = rpt::server::finalize_server_options(options);
  } catch (const std::exception& error) {
    std::cerr << "rpt-server: " << error.what() << "\n";
    return 2;
  }
  rpt::server::configure_logging(options.log_level, options.log_json);
  rpt::keep_freed_memory_for_reuse();
  for (const std::string& warning : warnings) spdlog::warn("{}", warning);

  try {
    rpt::server::StopSignals stop_signals;  // before the models load: a signal then still drains
    rpt::server::Server server(options);
    server.serve([&stop_signals, &server] {
      const int signal = stop_signals.wait([&server] { server.reload_files(); });
      spdlog::info("received {}", rpt::server::signal_name(signal));
      stop_signals.watch_during_drain();
    });
  } catch (const rpt::Error& error) {
    spdlog::critical("{}", error.message());
    return 1;
  } catch (const std::exception& error) {
    spdlog::critical("{}", error.what());
    return 1;
  }
  return 0;
}
