// Texts the server refuses as blank (empty or whitespace only): the clients do not send them.
#pragma once

#include <string>

namespace rpt::client {

inline bool is_blank(const std::string& text) {
  return text.find_first_not_of(" \t\r\n\f\v") == std::string::npos;
}

}  // namespace rpt::client
