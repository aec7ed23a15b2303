// libFuzzer target: the bytes of a gRPC Translate request through rpt-server's own decoding
// (server/grpc_wire.h) and the request validation (tokenizing included). Must never crash.
#include <cstddef>
#include <cstdint>

#include <grpc/grpc.h>
#include <grpcpp/support/byte_buffer.h>

#include "fuzz_model.h"
#include "server/grpc_wire.h"
#include "server/request_validation.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  grpc_init();  // byte buffers come from gRPC's core
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rpt;
  grpc::Slice slice(data, size);
  const grpc::ByteBuffer raw(&slice, 1);
  v1::TranslateRequest request;
  if (!server::decode_translate_request(raw, &request).ok()) return 0;
  const server::ServerOptions& options = fuzz::fuzz_options();
  server::PreparedRequest prepared;
  server::prepare_request(request, fuzz::fuzz_model(), {}, options, &prepared);
  return 0;
}
