// libFuzzer target: arbitrary bytes as the body of the admin API's model and glossary changes
// (server/admin_requests.h), read as a load, a replace and a glossary put. Each either yields a
// change that keeps the rules (a storable name, a directory, a checked glossary) or refuses with
// INVALID_ARGUMENT; a glossary read is then checked against the fixture model's vocabulary
// (refusals there are rpt::InvalidArgument) and put on a shelf. Nothing else may escape.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "engine/errors.h"
#include "fuzz_model.h"
#include "server/admin_requests.h"
#include "server/glossary_store.h"

namespace {

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "admin_body: %s\n", what);
  __builtin_trap();
}

void check_model_change(const rpt::server::RequestStatus& status,
                        const rpt::server::ModelSpec& spec) {
  using rpt::server::StatusCode;
  if (!status.ok()) {
    if (status.code != StatusCode::kInvalidArgument) fail("a refusal that is not INVALID_ARGUMENT");
    return;
  }
  if (!rpt::server::storable_name(spec.name)) fail("a model name that is not storable");
  if (spec.directory.empty()) fail("a model change without a directory");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rpt;
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  const server::ServerOptions& options = fuzz::fuzz_options();
  server::ModelSpec load;
  check_model_change(server::read_model_change(options, body, "", &load), load);
  server::ModelSpec replace;
  check_model_change(server::read_model_change(options, body, "en-de", &replace), replace);

  std::string model;
  std::shared_ptr<const Glossary> glossary;
  const server::RequestStatus read = server::read_glossary_change(body, &model, &glossary);
  if (!read.ok()) {
    if (read.code != server::StatusCode::kInvalidArgument) fail("a glossary refusal");
    return 0;
  }
  if (glossary == nullptr) fail("an accepted glossary that is null");
  if (!model.empty() && !server::storable_name(model)) fail("a glossary's model not storable");
  try {
    fuzz::fuzz_model().span_protector->check_glossary(*glossary, "entry");
  } catch (const InvalidArgument&) {
    return 0;  // a term the model cannot write: refused by name
  }
  server::GlossaryShelf shelf;
  shelf.put("fuzz", glossary);
  if (shelf.get()->at("fuzz")->size() != glossary->size()) fail("the shelf lost entries");
  if (!shelf.remove("fuzz") || !shelf.get()->empty()) fail("the shelf kept a removed glossary");
  return 0;
}
