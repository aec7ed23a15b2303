#include "engine/vocabulary.h"

#include <fstream>

#include "kernels/errors.h"

namespace rpt {

Vocabulary::Vocabulary(const std::string& path, const std::string& unk_token) {
  std::ifstream file(path);
  RPT_CHECK(file.good(), ModelError, "cannot read vocabulary ", path);
  std::string line;
  while (std::getline(file, line)) tokens_.push_back(line);
  index(path, unk_token);
}

Vocabulary::Vocabulary(std::vector<std::string> tokens, const std::string& unk_token)
    : tokens_(std::move(tokens)) {
  index("vocabulary", unk_token);
}

void Vocabulary::index(const std::string& origin, const std::string& unk_token) {
  RPT_CHECK(!tokens_.empty(), ModelError, "vocabulary ", origin, " is empty");
  ids_.reserve(tokens_.size());
  for (std::size_t id = 0; id < tokens_.size(); ++id) {
    ids_.emplace(tokens_[id], static_cast<int>(id));  // first occurrence wins
  }
  auto unk = ids_.find(unk_token);
  RPT_CHECK(unk != ids_.end(), ModelError, "vocabulary ", origin, " has no unknown token '",
            unk_token, "'");
  unk_id_ = unk->second;
}

int Vocabulary::to_id(const std::string& token) const {
  auto found = ids_.find(token);
  return found == ids_.end() ? unk_id_ : found->second;
}

const std::string& Vocabulary::to_token(int id) const {
  RPT_CHECK(id >= 0 && id < size(), InvalidArgument, "token id ", id, " out of range [0, ", size(),
            ")");
  return tokens_[static_cast<std::size_t>(id)];
}

}  // namespace rpt
