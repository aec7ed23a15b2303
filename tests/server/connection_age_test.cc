// --max-connection-age: the server closes a long-lived client connection with GOAWAY, the
// client's channel leaves READY and reconnects, and its calls go on succeeding across it.
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "server_process.h"

namespace rpt::server_test {
namespace {

struct ChannelHistory {
  int calls = 0;
  int failed_calls = 0;
  int left_ready = 0;  // transitions out of READY: the connection went away
};

// Calls ListModels on one channel every 50 ms for `seconds` while watching its state.
ChannelHistory call_for(const ServerProcess& server, double seconds) {
  const auto channel = server.channel();
  auto stub = v1::Translator::NewStub(channel);
  ChannelHistory history;
  std::atomic<bool> done{false};
  std::thread watcher([&] {
    grpc_connectivity_state state = channel->GetState(true);
    while (!done.load()) {
      const auto poll = std::chrono::system_clock::now() + std::chrono::milliseconds(100);
      if (!channel->WaitForStateChange(state, poll)) continue;
      const grpc_connectivity_state next = channel->GetState(false);
      if (state == GRPC_CHANNEL_READY && next != GRPC_CHANNEL_READY) ++history.left_ready;
      state = next;
    }
  });
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    const auto context = context_with_deadline(5);
    v1::ListModelsResponse response;
    ++history.calls;
    if (!stub->ListModels(context.get(), {}, &response).ok()) ++history.failed_calls;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  done.store(true);
  watcher.join();
  return history;
}

TEST(ConnectionAgeTest, ALongLivedClientReconnectsAndItsCallsGoOn) {
  const ServerProcess server({"--model", fixture_model(), "--max-connection-age", "0.5",
                              "--max-connection-age-grace", "1"});
  const ChannelHistory history = call_for(server, 3.0);
  EXPECT_GE(history.left_ready, 2) << "the connection should have been closed every ~0.5 s";
  EXPECT_EQ(history.failed_calls, 0) << "of " << history.calls << " calls";
}

TEST(ConnectionAgeTest, WithoutTheOptionTheConnectionStays) {
  const ServerProcess server({"--model", fixture_model()});
  const ChannelHistory history = call_for(server, 3.0);
  EXPECT_EQ(history.left_ready, 0);
  EXPECT_EQ(history.failed_calls, 0) << "of " << history.calls << " calls";
}

}  // namespace
}  // namespace rpt::server_test
