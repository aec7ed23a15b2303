#include "fuzz_model.h"

#include <string>

#include <spdlog/spdlog.h>

namespace rpt::fuzz {

const server::ServerOptions& fuzz_options() {
  static const server::ServerOptions options = [] {
    spdlog::set_level(spdlog::level::warn);
    return server::ServerOptions{};
  }();
  return options;
}

const server::ServedModel& fuzz_model() {
  static const server::ServedModel* model = [] {
    auto* served = new server::ServedModel;  // lives for the process, like the server's
    served->name = "fuzz";
    served->model = Model::load(std::string(RPT_SOURCE_DIR) + "/tests/fixtures/shaw_k4/model");
    served->span_protector = std::make_shared<const SpanProtector>(served->model);
    served->max_input_length =
        server::served_input_limit(*served->model, fuzz_options().limits.max_input_length);
    return served;
  }();
  return *model;
}

}  // namespace rpt::fuzz
