#include "server/http_server.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netdb.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <unordered_map>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "server/http_body_encoding.h"

namespace rpt::server {

// One request from its headers to its completion. Shared by the connection (through con_cls),
// the responders and the hangup watcher, any of which may outlive the others.
struct HttpRequestState {
  std::mutex mutex;
  MHD_Connection* connection = nullptr;
  HttpRequest request;
  std::optional<HttpResponse> response;  // set by the responder
  bool dispatched = false;               // the handler has the request
  bool suspended = false;                // waiting for the responder
  int fd = -1;                           // the connection's socket, watched while suspended
  std::function<void()> client_gone;     // HttpResponder::on_client_gone
  std::vector<std::pair<std::string, std::string>> extra_headers;  // HttpResponder::add_header
};

namespace {

// How long destruction waits for requests in progress to take their answers.
constexpr std::chrono::seconds kDrainTimeout{2};

// Binds and listens on "HOST:PORT"; returns the socket and sets *port.
int bind_listener(const std::string& address, int* port) {
  const auto colon = address.rfind(':');
  if (colon == std::string::npos) throw std::runtime_error("HTTP address wants HOST:PORT");
  std::string host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  const std::string service = address.substr(colon + 1);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &found) != 0 ||
      found == nullptr) {
    throw std::runtime_error("cannot resolve HTTP address " + address);
  }
  const int fd = ::socket(found->ai_family, found->ai_socktype | SOCK_CLOEXEC, 0);
  const int yes = 1;
  if (fd >= 0) ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  const bool bound =
      fd >= 0 && ::bind(fd, found->ai_addr, found->ai_addrlen) == 0 && ::listen(fd, 512) == 0;
  freeaddrinfo(found);
  if (!bound) {
    const std::string reason = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    throw std::runtime_error("cannot listen for HTTP on " + address + ": " + reason);
  }
  sockaddr_storage local{};
  socklen_t length = sizeof(local);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &length);
  *port = ntohs(local.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&local)->sin6_port
                                            : reinterpret_cast<sockaddr_in*>(&local)->sin_port);
  return fd;
}

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

MHD_Result queue(MHD_Connection* connection, const HttpResponse& answer) {
  MHD_Response* response = MHD_create_response_from_buffer(
      answer.body.size(), const_cast<char*>(answer.body.data()), MHD_RESPMEM_MUST_COPY);
  if (response == nullptr) return MHD_NO;
  MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, answer.content_type.c_str());
  for (const auto& [name, value] : answer.headers) {
    MHD_add_response_header(response, name.c_str(), value.c_str());
  }
  const MHD_Result queued =
      MHD_queue_response(connection, static_cast<unsigned>(answer.status), response);
  MHD_destroy_response(response);
  return queued;
}

MHD_Result collect_header(void* headers, MHD_ValueKind, const char* key, const char* value) {
  if (key != nullptr) {
    (*static_cast<std::map<std::string, std::string>*>(headers))[lower(key)] =
        value != nullptr ? value : "";
  }
  return MHD_YES;
}

MHD_Result collect_argument(void* arguments, MHD_ValueKind, const char* key, const char* value) {
  if (key != nullptr) {
    static_cast<std::vector<std::pair<std::string, std::string>>*>(arguments)->emplace_back(
        key, value != nullptr ? value : "");
  }
  return MHD_YES;
}

// libmicrohttpd's post processor hands a part over in pieces; a piece at offset 0 starts a part.
MHD_Result collect_part(void* parts, MHD_ValueKind, const char* key, const char* filename,
                        const char* content_type, const char*, const char* data, std::uint64_t off,
                        std::size_t size) {
  auto& out = *static_cast<std::vector<HttpFormPart>*>(parts);
  if (off == 0 || out.empty()) {
    out.push_back({.name = key != nullptr ? key : "",
                   .filename = filename != nullptr ? filename : "",
                   .content_type = content_type != nullptr ? content_type : "",
                   .data = ""});
  }
  if (size > 0) out.back().data.append(data, size);
  return MHD_YES;
}

// A multipart/form-data body's parts, parsed with the connection's headers (boundary).
void parse_multipart(MHD_Connection* connection, HttpRequest& request) {
  const auto type = request.headers.find("content-type");
  if (request.body_too_large || type == request.headers.end() ||
      !type->second.starts_with("multipart/form-data")) {
    return;
  }
  MHD_PostProcessor* processor =
      MHD_create_post_processor(connection, 64 * 1024, collect_part, &request.parts);
  if (processor == nullptr) return;  // no boundary: the handler sees no parts
  if (MHD_post_process(processor, request.body.data(), request.body.size()) != MHD_YES) {
    request.parts.clear();
  }
  MHD_destroy_post_processor(processor);
}

// The body as it was before Content-Encoding compressed it (server/http_body_encoding.h), or
// the answer when it cannot be had: 415 for an encoding other than gzip and deflate, 400 for a
// broken stream, with the message under "error" and "message" (what LibreTranslate's and
// DeepL's clients read). A body over the limit once inflated is marked for the handler's 413.
std::optional<HttpResponse> decode_content_encoding(HttpRequest& request, std::size_t max_bytes) {
  const auto encoding = request.headers.find("content-encoding");
  if (request.body_too_large || encoding == request.headers.end()) return std::nullopt;
  DecodedBody decoded = decode_body(std::move(request.body), encoding->second, max_bytes);
  request.body.clear();
  switch (decoded.outcome) {
    case DecodedBody::Outcome::kDecoded:
      request.body = std::move(decoded.body);
      request.headers.erase(encoding);
      return std::nullopt;
    case DecodedBody::Outcome::kTooLarge:
      request.body_too_large = true;
      return std::nullopt;
    case DecodedBody::Outcome::kUnsupported:
    case DecodedBody::Outcome::kCorrupt:
      break;
  }
  const nlohmann::json error = {{"error", decoded.message}, {"message", decoded.message}};
  return HttpResponse{.status = decoded.outcome == DecodedBody::Outcome::kUnsupported ? 415 : 400,
                      .content_type = "application/json",
                      .body = error.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                      .headers = {{"Accept-Encoding", "gzip, deflate"}}};
}

}  // namespace

// Polls the sockets of suspended connections, which libmicrohttpd leaves alone until resumed,
// for a client's hangup (POLLRDHUP: it closed or shut down its side; POLLHUP/POLLERR: reset).
// A socket is watched from its suspension until the responder, before resuming it, takes it
// out: libmicrohttpd may close it once resumed, and its number may then name another socket.
class HttpServer::HangupWatcher {
 public:
  HangupWatcher() : wake_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
    if (wake_ < 0) throw std::runtime_error("cannot create an eventfd for the HTTP server");
    thread_ = std::thread([this] { run(); });
  }
  ~HangupWatcher() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    signal();
    thread_.join();
    ::close(wake_);
  }

  void watch(std::shared_ptr<HttpRequestState> state) {
    std::lock_guard lock(mutex_);
    const int fd = state->fd;
    watched_[fd] = {next_serial_++, std::move(state)};
    signal();
  }

  // Caller holds state.mutex.
  void unwatch(const HttpRequestState& state) {
    std::lock_guard lock(mutex_);
    const auto found = watched_.find(state.fd);
    if (found != watched_.end() && found->second.state.get() == &state) watched_.erase(found);
  }

 private:
  struct Entry {
    std::uint64_t serial;  // tells a socket number's new watch from its old one
    std::shared_ptr<HttpRequestState> state;
  };

  void signal() const {
    const std::uint64_t one = 1;
    [[maybe_unused]] const auto written = ::write(wake_, &one, sizeof(one));
  }

  void run() {
    std::vector<pollfd> fds;
    std::vector<std::uint64_t> serials;
    for (;;) {
      fds.assign(1, pollfd{.fd = wake_, .events = POLLIN, .revents = 0});
      serials.assign(1, 0);
      {
        std::lock_guard lock(mutex_);
        if (stop_) return;
        for (const auto& [fd, entry] : watched_) {
          fds.push_back({.fd = fd, .events = POLLRDHUP, .revents = 0});
          serials.push_back(entry.serial);
        }
      }
      if (::poll(fds.data(), fds.size(), -1) < 0) {
        if (errno == EINTR) continue;
        spdlog::error("HTTP hangup watcher: poll failed: {}", std::strerror(errno));
        return;
      }
      if (fds[0].revents != 0) {
        std::uint64_t count = 0;
        [[maybe_unused]] const auto read = ::read(wake_, &count, sizeof(count));
      }
      for (std::size_t i = 1; i < fds.size(); ++i) {
        if ((fds[i].revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) == 0) continue;
        std::shared_ptr<HttpRequestState> gone;
        {
          std::lock_guard lock(mutex_);
          const auto found = watched_.find(fds[i].fd);
          if (found == watched_.end() || found->second.serial != serials[i]) continue;
          gone = std::move(found->second.state);
          watched_.erase(found);
        }
        // Closed under us (libmicrohttpd stopping with the request suspended): nothing to tell.
        if ((fds[i].revents & POLLNVAL) != 0) continue;
        std::function<void()> client_gone;
        {
          std::lock_guard lock(gone->mutex);
          if (!gone->response.has_value()) client_gone = std::move(gone->client_gone);
        }
        // Outside every lock: it may take the scheduler's.
        if (client_gone) client_gone();
      }
    }
  }

  const int wake_;  // an eventfd: the watched set changed, or stop
  std::mutex mutex_;
  std::unordered_map<int, Entry> watched_;  // by socket
  std::uint64_t next_serial_ = 1;
  bool stop_ = false;
  std::thread thread_;
};

void HttpResponder::operator()(HttpResponse answer) const {
  std::unique_lock lock(state_->mutex);
  answer.headers.insert(answer.headers.end(), state_->extra_headers.begin(),
                        state_->extra_headers.end());
  state_->response = std::move(answer);
  state_->client_gone = nullptr;
  const bool resume = state_->suspended;
  state_->suspended = false;
  if (resume) server_->watcher_->unwatch(*state_);
  lock.unlock();
  // Resumed outside our lock: libmicrohttpd takes its own locks in there.
  if (resume) MHD_resume_connection(state_->connection);
}

void HttpResponder::add_header(std::string name, std::string value) const {
  std::lock_guard lock(state_->mutex);
  state_->extra_headers.emplace_back(std::move(name), std::move(value));
}

void HttpResponder::on_client_gone(std::function<void()> client_gone) const {
  std::lock_guard lock(state_->mutex);
  if (!state_->response.has_value()) state_->client_gone = std::move(client_gone);
}

struct HttpServer::Dispatch {
  // libmicrohttpd's access handler: called once with the headers, then once per piece of body,
  // then with no data (the body is complete), and again after each resume.
  static MHD_Result access(void* cls, MHD_Connection* connection, const char* url,
                           const char* method, const char*, const char* upload_data,
                           std::size_t* upload_data_size, void** con_cls) {
    auto& server = *static_cast<HttpServer*>(cls);
    if (*con_cls == nullptr) {
      auto state = std::make_shared<HttpRequestState>();
      state->connection = connection;
      state->request.method = method;
      state->request.path = url;
      MHD_get_connection_values(connection, MHD_HEADER_KIND, collect_header,
                                &state->request.headers);
      MHD_get_connection_values(connection, MHD_GET_ARGUMENT_KIND, collect_argument,
                                &state->request.query);
      const auto length = state->request.headers.find("content-length");
      if (length != state->request.headers.end() &&
          std::strtoull(length->second.c_str(), nullptr, 10) > server.options_.max_body_bytes) {
        state->request.body_too_large = true;
      }
      *con_cls = new std::shared_ptr<HttpRequestState>(state);
      server.in_progress_.fetch_add(1);
      // A declared body over the limit is answered at once (413), unread: libmicrohttpd then
      // closes the connection instead of taking gigabytes it would only discard.
      if (!state->request.body_too_large) return MHD_YES;
      return dispatch(server, connection, std::move(state));
    }
    std::shared_ptr<HttpRequestState> state =
        *static_cast<std::shared_ptr<HttpRequestState>*>(*con_cls);
    if (*upload_data_size != 0) {
      HttpRequest& request = state->request;
      if (!request.body_too_large &&
          request.body.size() + *upload_data_size > server.options_.max_body_bytes) {
        request.body_too_large = true;
        request.body.clear();
        request.body.shrink_to_fit();
      }
      if (!request.body_too_large) request.body.append(upload_data, *upload_data_size);
      *upload_data_size = 0;  // consumed (or dropped)
      return MHD_YES;
    }
    return dispatch(server, connection, std::move(state));
  }

  // The body is complete (or refused): hands the request to the handler once, and queues the
  // answer when there is one (else suspends until the responder resumes the connection).
  static MHD_Result dispatch(HttpServer& server, MHD_Connection* connection,
                             std::shared_ptr<HttpRequestState> state) {
    std::unique_lock lock(state->mutex);
    if (state->response.has_value()) return queue(connection, *state->response);
    if (state->dispatched) return MHD_YES;  // a spurious call while the answer is pending
    state->dispatched = true;
    lock.unlock();
    const HttpResponder responder(&server, state);
    try {
      if (std::optional<HttpResponse> refused =
              decode_content_encoding(state->request, server.options_.max_body_bytes)) {
        responder(std::move(*refused));
      } else {
        parse_multipart(connection, state->request);
        server.handler_(std::move(state->request), responder);
      }
    } catch (const std::exception& error) {  // nothing may unwind into libmicrohttpd's C code
      spdlog::error("HTTP handler failed: {}", error.what());
      responder({.status = 500, .body = "internal error\n"});
    } catch (...) {
      spdlog::error("HTTP handler failed");
      responder({.status = 500, .body = "internal error\n"});
    }
    lock.lock();
    if (state->response.has_value()) return queue(connection, *state->response);
    // Answered later from another thread: free this pool thread meanwhile, and watch the socket
    // for a hangup. Suspended under the lock, so the responder resumes only a suspended
    // connection.
    state->suspended = true;
    MHD_suspend_connection(connection);
    const MHD_ConnectionInfo* info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (info != nullptr) {
      state->fd = info->connect_fd;
      server.watcher_->watch(state);
    }
    return MHD_YES;
  }

  static void completed(void* cls, MHD_Connection*, void** con_cls, MHD_RequestTerminationCode) {
    if (*con_cls == nullptr) return;
    delete static_cast<std::shared_ptr<HttpRequestState>*>(*con_cls);
    *con_cls = nullptr;
    static_cast<HttpServer*>(cls)->in_progress_.fetch_sub(1);
  }
};

HttpServer::HttpServer(const HttpServerOptions& options, HttpHandler handler)
    : options_(options), handler_(std::move(handler)), watcher_(std::make_unique<HangupWatcher>()) {
  const int listener = bind_listener(options.address, &port_);
  const bool tls = !options.tls_cert_pem.empty() || !options.tls_key_pem.empty();
  if (tls && MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
    ::close(listener);
    throw std::runtime_error("this libmicrohttpd has no TLS: HTTPS on " + options.address +
                             " is not possible");
  }
  unsigned flags =
      MHD_USE_AUTO | MHD_USE_INTERNAL_POLLING_THREAD | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
  if (tls) flags |= MHD_USE_TLS;
  // The certificate options come last, and only with TLS (libmicrohttpd refuses them without).
  daemon_ = MHD_start_daemon(
      flags, 0, nullptr, nullptr, &Dispatch::access, this, MHD_OPTION_LISTEN_SOCKET, listener,
      MHD_OPTION_THREAD_POOL_SIZE, static_cast<unsigned>(options.threads),
      MHD_OPTION_THREAD_STACK_SIZE, options.thread_stack_bytes, MHD_OPTION_CONNECTION_LIMIT,
      static_cast<unsigned>(options.max_connections), MHD_OPTION_CONNECTION_TIMEOUT,
      static_cast<unsigned>(options.idle_timeout.count()), MHD_OPTION_NOTIFY_COMPLETED,
      &Dispatch::completed, this, tls ? MHD_OPTION_HTTPS_MEM_KEY : MHD_OPTION_END,
      options_.tls_key_pem.c_str(), MHD_OPTION_HTTPS_MEM_CERT, options_.tls_cert_pem.c_str(),
      MHD_OPTION_END);
  if (daemon_ == nullptr) {
    ::close(listener);
    throw std::runtime_error("cannot start the HTTP server on " + options.address +
                             (tls ? " with TLS: is the certificate a PEM chain and the key its "
                                    "PEM private key?"
                                  : ""));
  }
}

HttpServer::~HttpServer() {
  // Stop accepting, then give the requests in progress their answers before closing.
  const MHD_socket listener = MHD_quiesce_daemon(daemon_);
  if (listener != MHD_INVALID_SOCKET) ::close(listener);
  const auto give_up = std::chrono::steady_clock::now() + kDrainTimeout;
  while (in_progress_.load() > 0 && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  MHD_stop_daemon(daemon_);
}

}  // namespace rpt::server
