// Where each string value of a JSON file lies in its bytes, by JSON pointer, so that a writer can
// replace those bytes and nothing else: spacing, one-line objects, escapes elsewhere, number
// spellings and line ends come back as they were (json_catalog.cc).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>

namespace rpt::documents {

// [begin, end): from a string's opening quote to just past its closing quote.
struct ByteRange {
  std::size_t begin = 0;
  std::size_t end = 0;
};

class JsonStringRanges {
 public:
  // `bytes` must be JSON that nlohmann-json parses (the caller has parsed it already); throws
  // std::runtime_error otherwise.
  explicit JsonStringRanges(std::string_view bytes);

  // The string value at `pointer` (RFC 6901, as nlohmann's json_pointer::to_string writes it);
  // a duplicate key's later value, as in a parsed document. Throws std::out_of_range when the
  // pointer names no string.
  ByteRange at(const std::string& pointer) const;

 private:
  std::unordered_map<std::string, ByteRange> ranges_;
};

}  // namespace rpt::documents
