// Where a segment may not be cut or end a sentence: inside a protected span, or inside a tag pair
// with what it encloses. Internal to documents/ (the segmenter and its cuts).
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace rpt::documents {

// Per byte position of `content` (and one past its end), whether no sentence may end there:
// inside a protected span, or (with `tag_pairs`) inside a tag pair with what it encloses.
// Linear in the text however the spans nest.
class Unbreakable {
 public:
  explicit Unbreakable(std::string_view content, bool tag_pairs = true);
  bool operator()(std::size_t at) const { return at < blocked_.size() && blocked_[at]; }
  void add(std::size_t begin, std::size_t end) {
    for (std::size_t at = begin + 1; at < end && at < blocked_.size(); ++at) blocked_[at] = true;
  }

 private:
  std::vector<bool> blocked_;
};

}  // namespace rpt::documents
