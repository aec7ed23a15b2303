#include "server/logging.h"

#include <memory>

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace rpt::server {
namespace {

// %j: the message as the contents of a JSON string (quotes, backslashes, controls escaped).
class JsonEscapedMessage final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& message, const std::tm&,
              spdlog::memory_buf_t& out) override {
    static constexpr char kHex[] = "0123456789abcdef";
    for (const char c : message.payload) {
      const auto byte = static_cast<unsigned char>(c);
      if (c == '"' || c == '\\') {
        out.push_back('\\');
        out.push_back(c);
      } else if (byte < 0x20) {
        const char escaped[] = {'\\', 'u', '0', '0', kHex[byte >> 4], kHex[byte & 0xF]};
        out.append(escaped, escaped + sizeof(escaped));
      } else {
        out.push_back(c);
      }
    }
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<JsonEscapedMessage>();
  }
};

}  // namespace

void configure_logging(const std::string& level, bool json) {
  auto logger =
      std::make_shared<spdlog::logger>("rpt", std::make_shared<spdlog::sinks::stderr_sink_mt>());
  if (json) {
    auto formatter = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
    formatter->add_flag<JsonEscapedMessage>('j').set_pattern(
        R"({"time":"%Y-%m-%dT%H:%M:%S.%fZ","level":"%l","thread":%t,"message":"%j"})");
    logger->set_formatter(std::move(formatter));
  } else {
    logger->set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%l] %v");
  }
  logger->set_level(spdlog::level::from_str(level));
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(std::move(logger));
}

}  // namespace rpt::server
