// rpt-client's admin verbs: the admin API of rpt-server (server/admin_api.h) over HTTP with
// libcurl, the key from a file (never a flag: flags show in `ps`).
//
//   rpt-client admin --url http://127.0.0.1:9464 --key-file admin.key models
//   rpt-client admin ... load fr models/en-fr [--compute-type int8]
//   rpt-client admin ... replace en-de /models/en-de-v2
//   rpt-client admin ... unload fr
//   rpt-client admin ... glossaries
//   rpt-client admin ... put-glossary legal legal.tsv [--for-model en-de]
//   rpt-client admin ... delete-glossary legal [--for-model en-de]
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "common/default_ports.h"

namespace rpt::client {

struct AdminOptions {
  // The server's --metrics-port, where its admin API is.
  std::string url = "http://127.0.0.1:" + std::to_string(kDefaultHttpPort);
  std::string key_file;
  std::string verb;
  std::string name;
  std::string path;          // a model directory, or a glossary TSV
  std::string compute_type;  // load / replace: the server's default when empty
  std::string model;         // glossary verbs: one model's (empty: every model)
  double timeout_seconds = 600;
};

// The `admin` subcommand of `app`, filling `options`.
CLI::App* add_admin_subcommand(CLI::App& app, AdminOptions& options);

// Runs the verb; prints the server's JSON answer on stdout. Exit code: 0 when the server said
// 2xx, else 1 (the error printed on stderr), 2 when the server could not be reached or a file
// read.
int run_admin(const AdminOptions& options);

}  // namespace rpt::client
