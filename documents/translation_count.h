// Every render/join of the documents library takes one translation per piece it handed out; a
// caller that sends another count has lost or invented one, and nothing sensible can be written.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace rpt::documents {

// std::invalid_argument "<who>: N translations for M <pieces>" unless given == expected.
inline void require_translation_count(std::string_view who, std::size_t given, std::size_t expected,
                                      std::string_view pieces) {
  if (given == expected) return;
  throw std::invalid_argument(std::string(who) + ": " + std::to_string(given) +
                              " translations for " + std::to_string(expected) + " " +
                              std::string(pieces));
}

}  // namespace rpt::documents
