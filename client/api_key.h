// The API key of the command-line clients (rpt-client, rpt-loadgen): a key of the server's
// --api-keys, given as --api-key KEY or, kept out of `ps`, as the first line of --api-key-file
// (common/key_file.h, as the admin verbs' --key-file), and sent with every call as gRPC metadata
// `authorization: Bearer KEY` (HTTP: the Authorization header).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "common/key_file.h"

namespace rpt::client {

struct ApiKeyOptions {
  std::string key;
  std::string file;
};

inline void add_api_key_options(CLI::App& app, ApiKeyOptions& options) {
  CLI::Option* key = app.add_option("--api-key", options.key,
                                    "A key of the server's --api-keys, sent with every call "
                                    "(gRPC metadata and HTTP Authorization: Bearer KEY)");
  app.add_option("--api-key-file", options.file,
                 "File whose first line is the --api-key (kept out of the process list)")
      ->check(CLI::ExistingFile)
      ->excludes(key);
}

// The key to send: --api-key, else the first line of --api-key-file; empty: none. Throws
// std::runtime_error when the file cannot be read.
inline std::string api_key(const ApiKeyOptions& options) {
  return options.file.empty() ? options.key : read_key_file(options.file);
}

}  // namespace rpt::client
