// How each protocol names the model selector's fields (proto/translate.proto's ModelSelector),
// for the messages that ask a caller to name one: gRPC's "model.model", the JSON API's "model",
// LibreTranslate's "source", DeepL's "source_lang".
#pragma once

#include <string_view>

namespace rpt::server {

struct SelectorFields {
  std::string_view model;  // empty: the protocol cannot name a model
  std::string_view source_language;
  std::string_view target_language;
};

inline constexpr SelectorFields kGrpcSelectorFields{"model.model", "model.source_language",
                                                    "model.target_language"};
inline constexpr SelectorFields kJsonSelectorFields{"model", "source_language", "target_language"};
inline constexpr SelectorFields kLibreTranslateSelectorFields{"", "source", "target"};
inline constexpr SelectorFields kDeepLSelectorFields{"", "source_lang", "target_lang"};

}  // namespace rpt::server
