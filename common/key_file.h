// A key kept in a file (rpt-server --admin-key-file, rpt-client admin --key-file): its first
// line, trailing spaces and '\r' cut. Header-only and dependency-free, like common/glossary_file.h,
// so that the server and the clients read it the same way.
#pragma once

#include <fstream>
#include <stdexcept>
#include <string>

namespace rpt {

// Throws std::runtime_error "cannot read PATH" when the file cannot be opened or is empty.
inline std::string read_key_file(const std::string& path) {
  std::ifstream file(path);
  std::string key;
  if (!file || !std::getline(file, key)) throw std::runtime_error("cannot read " + path);
  while (!key.empty() && (key.back() == '\r' || key.back() == ' ')) key.pop_back();
  return key;
}

}  // namespace rpt
