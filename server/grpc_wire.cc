#include "server/grpc_wire.h"

#include <grpcpp/impl/codegen/proto_utils.h>

#include "common/text_hygiene.h"
#include "proto/translate_wire.pb.h"
#include "server/selector_fields.h"

namespace rpt::server {

RequestStatus decode_translate_request(const grpc::ByteBuffer& raw, v1::TranslateRequest* request) {
  grpc::ByteBuffer readable(raw);  // shares the slices; deserializing consumes the buffer
  v1::wire::TranslateRequestBytes wire;
  if (!grpc::SerializationTraits<v1::wire::TranslateRequestBytes>::Deserialize(&readable, &wire)
           .ok()) {
    // protobuf's parser stops at its recursion limit (100) rather than exhaust the stack.
    return {StatusCode::kInvalidArgument,
            "the request is not a valid rpt.v1.TranslateRequest (malformed, or messages or groups "
            "nested more than 100 levels deep)"};
  }
  v1::wire::ModelSelectorBytes& selector = *wire.mutable_model();
  const std::pair<std::string_view, std::string*> fields[] = {
      {kGrpcSelectorFields.model, selector.mutable_model()},
      {kGrpcSelectorFields.source_language, selector.mutable_source_language()},
      {kGrpcSelectorFields.target_language, selector.mutable_target_language()}};
  for (const auto& [name, value] : fields) {
    if (!is_valid_utf8(*value)) {
      return {StatusCode::kInvalidArgument, std::string(name) + " is not valid UTF-8"};
    }
  }
  if (!is_valid_utf8(wire.glossary_name())) {
    return {StatusCode::kInvalidArgument, "glossary_name is not valid UTF-8"};
  }
  request->set_glossary_name(std::move(*wire.mutable_glossary_name()));
  // Entries go on unchecked: the request's validation names a bad one (glossary[i]).
  for (auto& entry : *wire.mutable_glossary()) {
    v1::GlossaryEntry* out = request->add_glossary();
    out->set_source(std::move(*entry.mutable_source()));
    out->set_target(std::move(*entry.mutable_target()));
  }
  v1::ModelSelector& model = *request->mutable_model();
  model.set_model(std::move(*selector.mutable_model()));
  model.set_source_language(std::move(*selector.mutable_source_language()));
  model.set_target_language(std::move(*selector.mutable_target_language()));
  request->mutable_texts()->Swap(wire.mutable_texts());
  request->mutable_options()->Swap(wire.mutable_options());
  return RequestStatus::Ok();
}

bool encode_message(const google::protobuf::Message& message, grpc::ByteBuffer* raw) {
  bool own_buffer = false;
  return grpc::SerializationTraits<google::protobuf::Message>::Serialize(message, raw, &own_buffer)
      .ok();
}

}  // namespace rpt::server
