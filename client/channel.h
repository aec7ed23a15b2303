// The gRPC channel of the command-line clients: plaintext, to any gRPC target (HOST:PORT,
// dns:///NAME:PORT, ipv4:ADDR:PORT,ADDR:PORT), and the load-balancing policy over the addresses
// the target resolves to. round_robin spreads calls over every replica behind a headless
// Kubernetes Service (docs/kubernetes.md); pick_first, gRPC's default, sends all to one.
#pragma once

#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <grpcpp/grpcpp.h>

namespace rpt::client {

struct ChannelOptions {
  std::string server = "localhost:50051";
  std::string lb = "pick_first";  // pick_first | round_robin
};

inline void add_channel_options(CLI::App& app, ChannelOptions& options) {
  app.add_option("--server", options.server,
                 "gRPC target: HOST:PORT, dns:///NAME:PORT (every address NAME resolves to), ...")
      ->capture_default_str();
  app.add_option("--lb", options.lb,
                 "Load balancing over the target's addresses: pick_first (one connection) or "
                 "round_robin (calls spread over all)")
      ->check(CLI::IsMember({"pick_first", "round_robin"}))
      ->capture_default_str();
}

inline std::shared_ptr<grpc::Channel> make_channel(const ChannelOptions& options) {
  grpc::ChannelArguments arguments;
  arguments.SetServiceConfigJSON(R"({"loadBalancingConfig": [{")" + options.lb + R"(": {}}]})");
  return grpc::CreateCustomChannel(options.server, grpc::InsecureChannelCredentials(), arguments);
}

}  // namespace rpt::client
