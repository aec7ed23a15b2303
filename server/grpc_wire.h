// Translate and TranslateStream take their request as raw bytes (gRPC's raw callback API) and
// decode it here, so that invalid UTF-8 in a text field of the request is INVALID_ARGUMENT naming
// the field rather than a parser failure inside gRPC (why: proto/translate_wire.proto). Their
// responses are serialized here too.
#pragma once

#include <grpcpp/support/byte_buffer.h>

#include "proto/translate.pb.h"
#include "server/status.h"

namespace rpt::server {

// Decodes `raw` into `request`: INVALID_ARGUMENT when it is no TranslateRequest or a string field
// of the model selector is not UTF-8 (named: "model.model", "model.source_language", ...). The
// texts are checked, by index, with the rest of the request (request_validation.h).
RequestStatus decode_translate_request(const grpc::ByteBuffer& raw, v1::TranslateRequest* request);

// Serializes `message` into `raw`; false when protobuf cannot.
bool encode_message(const google::protobuf::Message& message, grpc::ByteBuffer* raw);

}  // namespace rpt::server
