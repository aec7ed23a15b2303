#include "server/http_fields.h"

#include <microhttpd.h>
#include <unicode/locid.h>
#include <unicode/unistr.h>

namespace rpt::server {

FormFields form_fields(const std::string& body) {
  FormFields fields;
  std::size_t begin = 0;
  while (begin <= body.size()) {
    std::size_t end = body.find('&', begin);
    if (end == std::string::npos) end = body.size();
    std::string pair = body.substr(begin, end - begin);
    begin = end + 1;
    if (pair.empty()) continue;
    for (char& c : pair) {
      if (c == '+') c = ' ';
    }
    const std::size_t equals = pair.find('=');
    std::string name = pair.substr(0, equals);
    std::string value = equals == std::string::npos ? std::string() : pair.substr(equals + 1);
    name.resize(MHD_http_unescape(name.data()));
    value.resize(MHD_http_unescape(value.data()));
    fields[name].push_back(std::move(value));
  }
  return fields;
}

std::string language_name(const std::string& code) {
  icu::UnicodeString name;
  icu::Locale(code.c_str()).getDisplayLanguage(icu::Locale::getEnglish(), name);
  std::string out;
  name.toUTF8String(out);
  return out.empty() ? code : out;
}

}  // namespace rpt::server
