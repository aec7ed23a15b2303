#include "documents/json_string_ranges.h"

#include <nlohmann/json.hpp>

#include <iterator>
#include <stdexcept>
#include <vector>

namespace rpt::documents {
namespace {

using Json = nlohmann::json;

// An input iterator over the file's bytes that records how far the parser has read. nlohmann's
// lexer reads a string token up to its closing quote and no further, and the parser reports the
// string before it reads on: at that moment `consumed` is just past the closing quote.
class CountingIterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  CountingIterator(const char* at, const char** consumed) : at_(at), consumed_(consumed) {}
  reference operator*() const { return *at_; }
  CountingIterator& operator++() {
    *consumed_ = ++at_;
    return *this;
  }
  bool operator==(const CountingIterator& other) const { return at_ == other.at_; }
  bool operator!=(const CountingIterator& other) const { return at_ != other.at_; }

 private:
  const char* at_;
  const char** consumed_;
};

// Follows the path to each value; records each string value's bytes.
class RangeRecorder : public nlohmann::json_sax<Json> {
 public:
  RangeRecorder(std::string_view bytes, std::unordered_map<std::string, ByteRange>& ranges)
      : bytes_(bytes), consumed_(bytes.data()), ranges_(ranges) {}

  const char** consumed() { return &consumed_; }

  bool string(string_t& /*value*/) override {
    // The opening quote is the first after the previous token: only blanks and ':' ',' '['
    // lie between.
    ranges_[pointer_of_value()] = {bytes_.find('"', token_start_), offset()};
    return value_done();
  }
  bool null() override { return value_done(); }
  bool boolean(bool /*value*/) override { return value_done(); }
  bool number_integer(number_integer_t /*value*/) override { return value_done(); }
  bool number_unsigned(number_unsigned_t /*value*/) override { return value_done(); }
  bool number_float(number_float_t /*value*/, const string_t& /*spelling*/) override {
    return value_done();
  }
  bool binary(binary_t& /*value*/) override { return value_done(); }
  bool start_object(std::size_t /*elements*/) override { return open(false); }
  bool start_array(std::size_t /*elements*/) override { return open(true); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(string_t& key) override {
    frames_.back().key = key;
    token_start_ = offset();
    return true;
  }
  bool parse_error(std::size_t /*position*/, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& error) override {
    throw std::runtime_error(error.what());
  }

 private:
  struct Frame {
    bool array = false;
    std::size_t index = 0;  // an array's element being read
    std::string key;        // an object's member being read
  };

  std::size_t offset() const { return static_cast<std::size_t>(consumed_ - bytes_.data()); }

  std::string pointer_of_value() const {
    Json::json_pointer pointer;
    for (const Frame& frame : frames_) {
      pointer = frame.array ? pointer / frame.index : pointer / frame.key;
    }
    return pointer.to_string();
  }
  bool open(bool array) {
    frames_.push_back({array, 0, {}});
    token_start_ = offset();
    return true;
  }
  bool close() {
    frames_.pop_back();
    return value_done();
  }
  // After a value: an array moves to its next element, and the next token starts here.
  bool value_done() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().index;
    token_start_ = offset();
    return true;
  }

  std::string_view bytes_;
  const char* consumed_;
  std::size_t token_start_ = 0;
  std::vector<Frame> frames_;
  std::unordered_map<std::string, ByteRange>& ranges_;
};

}  // namespace

JsonStringRanges::JsonStringRanges(std::string_view bytes) {
  RangeRecorder recorder(bytes, ranges_);
  Json::sax_parse(CountingIterator(bytes.data(), recorder.consumed()),
                  CountingIterator(bytes.data() + bytes.size(), recorder.consumed()), &recorder);
}

ByteRange JsonStringRanges::at(const std::string& pointer) const {
  const auto found = ranges_.find(pointer);
  if (found == ranges_.end()) throw std::out_of_range("JSON: no string value at " + pointer);
  return found->second;
}

}  // namespace rpt::documents
