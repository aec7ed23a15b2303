// libFuzzer target: a body through the decoders of the APIs other tools speak (LibreTranslate's
// JSON/form request, DeepL's fields from JSON/form/query, DeepL's TSV glossary entries, form
// decoding). The first byte picks the Content-Type. Must never crash or throw.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "server/deepl_api.h"
#include "server/http_fields.h"
#include "server/libretranslate_api.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rpt::server;
  if (size == 0) return 0;
  static const char* const kTypes[] = {"application/json", "application/x-www-form-urlencoded",
                                       "text/plain", "multipart/form-data; boundary=x"};
  HttpRequest request;
  request.method = "POST";
  request.path = "/v2/translate";
  request.headers["content-type"] = kTypes[data[0] % 4];
  request.body.assign(reinterpret_cast<const char*>(data) + 1, size - 1);
  if ((data[0] & 4) != 0) request.query = {{"type", "target"}, {"text", request.body}};
  if ((data[0] & 8) != 0) request.parts.push_back({"q", "", "", request.body});
  LibreTranslateRequest libretranslate;
  read_libretranslate_request(request, &libretranslate);
  FormFields fields;
  read_deepl_fields(request, &fields);
  std::vector<rpt::GlossaryEntry> entries;
  read_glossary_entries(request.body, &entries);
  form_fields(request.body);
  return 0;
}
