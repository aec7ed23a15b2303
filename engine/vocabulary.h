// Token <-> id mapping of one side of a model (one token per line; line number = id).
// Immutable after construction; thread-safe.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

namespace rpt {

class Vocabulary {
 public:
  // Throws ModelError naming `path` if it is missing or empty or lacks `unk_token`.
  Vocabulary(const std::string& path, const std::string& unk_token);
  Vocabulary(std::vector<std::string> tokens, const std::string& unk_token);

  int size() const { return static_cast<int>(tokens_.size()); }
  // Unknown tokens map to the unk id.
  int to_id(const std::string& token) const;
  bool contains(const std::string& token) const { return ids_.count(token) != 0; }
  const std::string& to_token(int id) const;
  int unk_id() const { return unk_id_; }

 private:
  void index(const std::string& origin, const std::string& unk_token);

  std::vector<std::string> tokens_;
  std::unordered_map<std::string, int> ids_;
  int unk_id_ = 0;
};

}  // namespace rpt
