// The glossary file format, read by the engine (Glossary::load) and the clients (rpt-client
// --glossary), which do not link the engine: UTF-8 text, one "source<TAB>target" entry a line;
// blank lines and lines starting with '#' are skipped; a trailing '\r' is ignored.
// Header-only and dependency-free, like common/text_hygiene.h.
#pragma once

#include <fstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/text_hygiene.h"

namespace rpt {

struct GlossaryFileEntry {
  std::string source;
  std::string target;
  int line = 0;  // 1-based
};

// The entries of the glossary file at `path`, at most `max_entries`. Throws
// std::invalid_argument naming "PATH:LINE" for a line that is not "source<TAB>target", and
// "cannot open PATH". The terms themselves are checked by the Glossary they go into.
inline std::vector<GlossaryFileEntry> read_glossary_file(const std::string& path, int max_entries) {
  std::ifstream in(path, std::ios::binary);
  if (!in.good()) throw std::invalid_argument("cannot open glossary file " + path);
  std::vector<GlossaryFileEntry> entries;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.pop_back();
    if (line.empty() || line[0] == '#' || is_blank_text(line)) continue;
    const std::string where = path + ":" + std::to_string(number);
    const std::size_t tab = line.find('\t');
    if (tab == std::string::npos) {
      throw std::invalid_argument(where + ": expected \"source<TAB>target\", found no tab");
    }
    if (line.find('\t', tab + 1) != std::string::npos) {
      throw std::invalid_argument(where +
                                  ": expected \"source<TAB>target\", found more than one tab");
    }
    if (static_cast<int>(entries.size()) >= max_entries) {
      throw std::invalid_argument(where + ": more than " + std::to_string(max_entries) +
                                  " entries in one glossary file");
    }
    entries.push_back({line.substr(0, tab), line.substr(tab + 1), number});
  }
  // A read that failed (a directory: EISDIR) is no empty glossary.
  if (in.bad()) throw std::invalid_argument("cannot read glossary file " + path);
  return entries;
}

}  // namespace rpt
