#include "documents/bracket_pairs.h"

namespace rpt::documents {
namespace {

struct Bracket {
  std::string_view opening;
  std::string_view closing;
};

constexpr Bracket kBrackets[] = {{"(", ")"},
                                 {"[", "]"},
                                 {"\xEF\xBC\x88" /* （ */, "\xEF\xBC\x89" /* ） */},
                                 {"\xEF\xBC\xBB" /* ［ */, "\xEF\xBC\xBD" /* ］ */},
                                 {"\xE3\x80\x90" /* 【 */, "\xE3\x80\x91" /* 】 */},
                                 {"\xE3\x80\x94" /* 〔 */, "\xE3\x80\x95" /* 〕 */}};

struct Open {
  std::size_t kind = 0;  // index in kBrackets
  std::size_t at = 0;
};

}  // namespace

std::vector<std::pair<std::size_t, std::size_t>> bracket_pairs(std::string_view text,
                                                               std::size_t max_bytes) {
  std::vector<std::pair<std::size_t, std::size_t>> pairs;
  std::vector<Open> open;
  for (std::size_t at = 0; at < text.size();) {
    const std::string_view rest = text.substr(at);
    std::size_t length = 1;
    for (std::size_t kind = 0; kind < std::size(kBrackets); ++kind) {
      if (rest.starts_with(kBrackets[kind].opening)) {
        open.push_back({kind, at});
        length = kBrackets[kind].opening.size();
        break;
      }
      if (!rest.starts_with(kBrackets[kind].closing)) continue;
      length = kBrackets[kind].closing.size();
      std::size_t match = open.size();
      while (match > 0 && open[match - 1].kind != kind) --match;
      if (match == 0) break;  // never opened: pairs with nothing
      const std::size_t end = at + length;
      if (end - open[match - 1].at <= max_bytes) pairs.emplace_back(open[match - 1].at, end);
      open.resize(match - 1);
      break;
    }
    at += length;
  }
  return pairs;
}

}  // namespace rpt::documents
