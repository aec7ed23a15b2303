// Text <-> pieces for one side of a model: SentencePiece when the model directory has a
// SentencePiece model, whitespace splitting otherwise. Thread-safe (SentencePiece processors
// are safe for concurrent Encode/Decode).
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace rpt {

class Tokenizer {
 public:
  // `model_path` empty: whitespace tokenisation. Throws ModelError if the model cannot load.
  explicit Tokenizer(const std::string& model_path);
  ~Tokenizer();
  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;

  std::vector<std::string> encode(const std::string& text) const;
  std::string decode(const std::vector<std::string>& pieces) const;

 private:
  std::unique_ptr<sentencepiece::SentencePieceProcessor> processor_;
};

}  // namespace rpt
