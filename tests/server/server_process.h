// Test support: the real rpt-server (and other binaries) as child processes on loopback, plus the
// small HTTP and text helpers the server tests share.
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "proto/translate.grpc.pb.h"

namespace rpt::server_test {

// Paths baked in by tests/server/CMakeLists.txt.
std::string server_binary();
std::string translate_binary();
std::string client_binary();
std::string loadgen_binary();
std::string source_dir();
// The committed model the server tests use (tests/fixtures/shaw_k4/model, en -> de).
std::string fixture_model();

// A fresh directory under the system temp dir.
std::string make_temp_dir(const std::string& prefix);

// A running rpt-server on 127.0.0.1 with free ports. Killed (SIGKILL) if still running at
// destruction.
class ServerProcess {
 public:
  // `arguments` are added to --listen/--metrics-port/--ready-file; waits until it serves.
  explicit ServerProcess(const std::vector<std::string>& arguments);
  ~ServerProcess();
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  int grpc_port() const { return grpc_port_; }
  int metrics_port() const { return metrics_port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(grpc_port_); }
  std::shared_ptr<grpc::Channel> channel() const;
  std::unique_ptr<v1::Translator::Stub> stub() const;

  // Sends `signal` (SIGTERM, SIGINT).
  void signal(int signal) const;
  // Waits for the exit; returns the exit code, or 128 + signal when killed. nullopt on timeout.
  std::optional<int> wait_exit(double timeout_seconds);
  // The server's stderr so far.
  std::string log() const;

 private:
  pid_t pid_ = -1;
  std::string directory_;
  int grpc_port_ = 0;
  int metrics_port_ = 0;
};

// How a process ended: its exit code (128 + signal when killed), stdout and stderr.
struct Finished {
  int exit_code = -1;
  std::string output;
  std::string errors;
};

// Runs `argv` with `input` on stdin until it exits; kills it and throws after `timeout_seconds`
// (so that a process which should stop at once fails the test instead of hanging it).
Finished run_to_exit(const std::vector<std::string>& argv, const std::string& input,
                     double timeout_seconds);

// Runs `argv` with `input` on stdin; returns its stdout (throws on a non-zero exit, with stderr).
std::string run_binary(const std::vector<std::string>& argv, const std::string& input);

// A TCP connection to 127.0.0.1:port (the caller closes it); -1 on failure.
int connect_loopback(int port);

// GET http://127.0.0.1:port/path: the status code and body (0 and empty on failure).
struct HttpResponse {
  int status = 0;
  std::string body;
};
HttpResponse http_request(int port, const std::string& path);
// The body alone.
std::string http_get(int port, const std::string& path);

// The value of the sample `name{labels}` in a Prometheus text exposition (labels in the
// exposition's order, e.g. `rpt_active_rows{model="en-de"}`); nullopt when absent.
std::optional<double> metric_value(const std::string& exposition, const std::string& sample);

// A free loopback TCP port (bound, then released).
int free_port();

// A client context with a deadline `seconds` from now.
std::unique_ptr<grpc::ClientContext> context_with_deadline(double seconds);

}  // namespace rpt::server_test
