// rpt-loadgen's input: the lines of a file, blank ones left out (nothing to translate), read
// round and round as one endless sequence of texts.
#pragma once

#include <cstddef>
#include <fstream>
#include <string>
#include <vector>

#include "client/blank_text.h"

namespace rpt::client {

class Corpus {
 public:
  // Empty when the file holds no text (or cannot be read).
  static Corpus read(const std::string& path) {
    Corpus corpus;
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) {
      if (!is_blank(line)) corpus.lines_.push_back(line);
    }
    return corpus;
  }

  std::size_t lines() const { return lines_.size(); }
  // Texts [first, first + count) of the endless sequence.
  std::vector<std::string> texts(long first, long count) const {
    std::vector<std::string> texts;
    texts.reserve(static_cast<std::size_t>(count));
    for (long i = first; i < first + count; ++i) {
      texts.push_back(lines_[static_cast<std::size_t>(i) % lines_.size()]);
    }
    return texts;
  }

 private:
  std::vector<std::string> lines_;
};

}  // namespace rpt::client
