#include "client/http_caller.h"

#include <cmath>
#include <cstdio>
#include <unordered_map>
#include <utility>

#include <nlohmann/json.hpp>

#include "client/http_outcome.h"

namespace rpt::client {

struct HttpCall {
  std::string body;    // the JSON request
  std::string answer;  // the response body, as it arrives
  Clock::time_point deadline;
  std::string refused;  // a code to end with unsent (INVALID_ARGUMENT, DEADLINE_EXCEEDED)
  Caller::Done done;
  CurlList headers;  // outlives `easy`, which points to it
  CurlEasy easy;
};

namespace {

std::size_t append_answer(char* data, std::size_t size, std::size_t count, void* call) {
  static_cast<HttpCall*>(call)->answer.append(data, size * count);
  return size * count;
}

// Readies `call` to be sent with `seconds_left` before its deadline (and `api_key`, when set, as
// a bearer token).
void prepare(HttpCall& call, const std::string& url, const std::string& api_key,
             double seconds_left) {
  call.easy.reset(curl_easy_init());
  if (!call.easy) throw std::bad_alloc();
  append(call.headers, "Content-Type: application/json");
  append(call.headers, "Expect:");  // no 100-continue round trip before a large body
  char timeout[64];
  // Every digit that matters: a fixed "%.3f" sent "0.000" for under half a millisecond left,
  // which the server refuses as not positive (INVALID_ARGUMENT instead of DEADLINE_EXCEEDED).
  std::snprintf(timeout, sizeof timeout, "X-Request-Timeout: %.9g", seconds_left);
  append(call.headers, timeout);
  if (!api_key.empty()) append(call.headers, "Authorization: Bearer " + api_key);
  CURL* easy = call.easy.get();
  curl_easy_setopt(easy, CURLOPT_URL, url.c_str());
  curl_easy_setopt(easy, CURLOPT_HTTPHEADER, call.headers.get());
  curl_easy_setopt(easy, CURLOPT_POSTFIELDS, call.body.data());
  curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(call.body.size()));
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, append_answer);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, &call);
  curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, static_cast<long>(std::ceil(seconds_left * 1e3)));
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL,
                   1L);  // timeouts without SIGALRM, safe off the main thread
}

CallOutcome outcome_of(CURLcode result, HttpCall& call) {
  if (result == CURLE_OPERATION_TIMEDOUT) return {.code = "DEADLINE_EXCEEDED"};
  if (result != CURLE_OK) return {.code = "UNAVAILABLE"};  // no connection, or it broke
  long http_status = 0;
  curl_easy_getinfo(call.easy.get(), CURLINFO_RESPONSE_CODE, &http_status);
  return outcome_of_http_answer(http_status, call.answer);
}

void finish(std::unique_ptr<HttpCall> call, CallOutcome outcome) {
  Caller::Done done = std::move(call->done);
  call.reset();
  done(std::move(outcome));
}

}  // namespace

std::optional<std::string> http_translate_url(const std::string& server) {
  std::string host_port = server;
  if (host_port.rfind("http://", 0) == 0) host_port.erase(0, 7);
  if (!host_port.empty() && host_port.back() == '/') host_port.pop_back();
  const std::size_t colon = host_port.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == host_port.size() ||
      host_port.find_first_not_of("0123456789", colon + 1) != std::string::npos ||
      host_port.find('/') != std::string::npos) {
    return std::nullopt;
  }
  return "http://" + host_port + "/v1/translate";
}

HttpCaller::HttpCaller(std::string url, TranslateSettings settings)
    : url_(std::move(url)), settings_(std::move(settings)), multi_(curl_multi_init()) {
  if (!multi_) throw std::bad_alloc();
  driver_ = std::thread([this] { drive(); });
}

HttpCaller::~HttpCaller() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  curl_multi_wakeup(multi_.get());
  driver_.join();
}

void HttpCaller::start(std::vector<std::string> texts, Clock::time_point deadline, Done done) {
  auto call = std::make_unique<HttpCall>();
  call->deadline = deadline;
  call->done = std::move(done);
  const nlohmann::json request = {{"model", settings_.model},
                                  {"texts", std::move(texts)},
                                  {"options", {{"beam_size", settings_.beam_size}}}};
  try {
    call->body = request.dump();
  } catch (const nlohmann::json::type_error&) {
    // A text that is not UTF-8 has no JSON form; the server refuses it over gRPC.
    call->refused = "INVALID_ARGUMENT";
  }
  {
    std::lock_guard lock(mutex_);
    queued_.push_back(std::move(call));
  }
  curl_multi_wakeup(multi_.get());
}

void HttpCaller::drive() {
  std::unordered_map<CURL*, std::unique_ptr<HttpCall>> in_flight;
  while (true) {
    std::vector<std::unique_ptr<HttpCall>> added;
    {
      std::lock_guard lock(mutex_);
      if (stopping_) break;
      added.swap(queued_);
    }
    for (auto& call : added) {
      // The timeout left when it is sent: calls queued behind a busy driver lose that time too.
      const double seconds_left =
          std::chrono::duration<double>(call->deadline - Clock::now()).count();
      if (call->refused.empty() && seconds_left <= 0) call->refused = "DEADLINE_EXCEEDED";
      if (!call->refused.empty()) {
        const std::string code = call->refused;
        finish(std::move(call), {.code = code});
        continue;
      }
      prepare(*call, url_, settings_.api_key, seconds_left);
      curl_multi_add_handle(multi_.get(), call->easy.get());
      in_flight.emplace(call->easy.get(), std::move(call));
    }
    int running = 0;
    curl_multi_perform(multi_.get(), &running);
    int left = 0;
    while (CURLMsg* message = curl_multi_info_read(multi_.get(), &left)) {
      if (message->msg != CURLMSG_DONE) continue;
      const CURLcode result = message->data.result;  // `message` dies with the removal below
      const auto found = in_flight.find(message->easy_handle);
      std::unique_ptr<HttpCall> call = std::move(found->second);
      in_flight.erase(found);
      curl_multi_remove_handle(multi_.get(), call->easy.get());
      CallOutcome outcome = outcome_of(result, *call);
      finish(std::move(call), std::move(outcome));
    }
    // Sleeps until a socket is ready, a curl timer is due, or start() or the destructor wakes it.
    curl_multi_poll(multi_.get(), nullptr, 0, 1000, nullptr);
  }
  for (const auto& [easy, call] : in_flight) curl_multi_remove_handle(multi_.get(), easy);
}

}  // namespace rpt::client
