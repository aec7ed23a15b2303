#include "server_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <nlohmann/json.hpp>

extern char** environ;

namespace rpt::server_test {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<char*> c_argv(std::vector<std::string>& argv) {
  std::vector<char*> out;
  for (std::string& a : argv) out.push_back(a.data());
  out.push_back(nullptr);
  return out;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::string server_binary() { return RPT_SERVER_BINARY; }
std::string translate_binary() { return RPT_TRANSLATE_BINARY; }
std::string client_binary() { return RPT_CLIENT_BINARY; }
std::string loadgen_binary() { return RPT_LOADGEN_BINARY; }
std::string source_dir() { return RPT_SOURCE_DIR; }
std::string fixture_model() { return source_dir() + "/tests/fixtures/shaw_k4/model"; }

std::string make_temp_dir(const std::string& prefix) {
  std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "XXXXXX")).string();
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  return pattern;
}

ServerProcess::ServerProcess(const std::vector<std::string>& arguments)
    : directory_(make_temp_dir("rpt_server_test_")) {
  const std::string ready = directory_ + "/ready.json";
  std::vector<std::string> argv = {
      server_binary(), "--listen", "127.0.0.1:0", "--metrics-port", "0", "--ready-file", ready};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  const std::string log_path = directory_ + "/server.log";
  posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  auto args = c_argv(argv);
  const int spawned = posix_spawn(&pid_, argv[0].c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) throw std::runtime_error("cannot start " + argv[0]);

  const auto give_up = Clock::now() + std::chrono::seconds(60);
  while (Clock::now() < give_up) {
    if (std::filesystem::exists(ready)) {
      const auto json = nlohmann::json::parse(read_all(ready));
      grpc_port_ = json.at("grpc_port").get<int>();
      metrics_port_ = json.at("metrics_port").get<int>();
      return;
    }
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      throw std::runtime_error("rpt-server exited at start:\n" + log());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  throw std::runtime_error("rpt-server did not become ready:\n" + log());
}

ServerProcess::~ServerProcess() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  std::error_code ignored;
  std::filesystem::remove_all(directory_, ignored);
}

std::shared_ptr<grpc::Channel> ServerProcess::channel() const {
  return grpc::CreateChannel(address(), grpc::InsecureChannelCredentials());
}

std::unique_ptr<v1::Translator::Stub> ServerProcess::stub() const {
  return v1::Translator::NewStub(channel());
}

void ServerProcess::signal(int signal) const { kill(pid_, signal); }

std::optional<int> ServerProcess::wait_exit(double timeout_seconds) {
  const auto give_up = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                          std::chrono::duration<double>(timeout_seconds));
  while (Clock::now() < give_up) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return std::nullopt;
}

std::string ServerProcess::log() const { return read_all(directory_ + "/server.log"); }

Finished run_to_exit(const std::vector<std::string>& argv_in, const std::string& input,
                     double timeout_seconds) {
  const std::string directory = make_temp_dir("rpt_run_");
  const std::string in_path = directory + "/in.txt";
  const std::string out_path = directory + "/out.txt";
  const std::string err_path = directory + "/err.txt";
  std::ofstream(in_path) << input;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, in_path.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  std::vector<std::string> argv = argv_in;
  auto args = c_argv(argv);
  pid_t pid = -1;
  const int spawned = posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    std::filesystem::remove_all(directory);
    throw std::runtime_error("cannot start " + argv[0]);
  }
  const auto give_up = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                          std::chrono::duration<double>(timeout_seconds));
  int status = 0;
  bool timed_out = false;
  while (waitpid(pid, &status, WNOHANG) != pid) {
    if (Clock::now() >= give_up) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
      timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  Finished finished;
  finished.output = read_all(out_path);
  finished.errors = read_all(err_path);
  std::filesystem::remove_all(directory);
  if (timed_out) {
    throw std::runtime_error(argv[0] + " did not exit in time:\n" + finished.output +
                             finished.errors);
  }
  finished.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return finished;
}

std::string run_binary(const std::vector<std::string>& argv, const std::string& input) {
  // Below ctest's TIMEOUT of 300 s, so that a hang fails with what the binary wrote.
  const Finished finished = run_to_exit(argv, input, 250);
  if (finished.exit_code != 0) {
    throw std::runtime_error(argv[0] + " failed (exit " + std::to_string(finished.exit_code) +
                             "):\n" + finished.errors);
  }
  return finished.output;
}

int connect_loopback(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

HttpResponse http_request(int port, const std::string& path) {
  const int fd = connect_loopback(port);
  if (fd < 0) return {};
  const std::string request =
      "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) < 0) {
    close(fd);
    return {};
  }
  std::string response;
  char buffer[4096];
  for (ssize_t n; (n = recv(fd, buffer, sizeof(buffer), 0)) > 0;) {
    response.append(buffer, static_cast<std::size_t>(n));
  }
  close(fd);
  const auto body = response.find("\r\n\r\n");
  // "HTTP/1.1 200 OK": the code follows the first space.
  if (body == std::string::npos || response.size() < 12) return {};
  return {std::stoi(response.substr(9, 3)), response.substr(body + 4)};
}

std::string http_get(int port, const std::string& path) { return http_request(port, path).body; }

std::optional<double> metric_value(const std::string& exposition, const std::string& sample) {
  std::istringstream lines(exposition);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(sample + " ", 0) == 0) return std::stod(line.substr(sample.size() + 1));
  }
  return std::nullopt;
}

int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  socklen_t length = sizeof(address);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  close(fd);
  return ntohs(address.sin_port);
}

std::unique_ptr<grpc::ClientContext> context_with_deadline(double seconds) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() +
                        std::chrono::duration_cast<std::chrono::microseconds>(
                            std::chrono::duration<double>(seconds)));
  return context;
}

}  // namespace rpt::server_test
