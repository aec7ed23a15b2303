// Helpers of the HTTP dialects other tools speak (LibreTranslate's, DeepL's): form fields and
// language names.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace rpt::server {

// The fields of an application/x-www-form-urlencoded body: name=value pairs joined by '&', '+'
// for a space and %HH escapes (decoded by libmicrohttpd). A repeated name keeps every value.
using FormFields = std::map<std::string, std::vector<std::string>>;
FormFields form_fields(const std::string& body);

// English name of a language code, from ICU's locale data ("de" -> "German", "pt-BR" ->
// "Portuguese"); the code itself when ICU does not know it.
std::string language_name(const std::string& code);

}  // namespace rpt::server
