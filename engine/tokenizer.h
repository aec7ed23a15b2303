// Text <-> pieces for one side of a model: SentencePiece when the model directory has a
// SentencePiece model, whitespace splitting otherwise. Thread-safe (SentencePiece processors
// are safe for concurrent Encode/Decode).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace rpt {

// The byte a SentencePiece byte-fallback piece ("<0xE2>") stands for; nullopt for any other
// piece.
std::optional<unsigned char> fallback_byte(std::string_view piece);

class Tokenizer {
 public:
  // `model_path` empty: whitespace tokenisation. Throws ModelError if the model cannot load.
  explicit Tokenizer(const std::string& model_path);
  ~Tokenizer();
  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;

  std::vector<std::string> encode(const std::string& text) const;
  std::string decode(const std::vector<std::string>& pieces) const;
  // The same, with each piece's surface in the text as a byte range [first, second) (empty for
  // a piece that adds no text).
  std::string decode(const std::vector<std::string>& pieces,
                     std::vector<std::pair<std::size_t, std::size_t>>* ranges) const;
  // True when `text` is always one piece of its own (a SentencePiece user-defined symbol, or a
  // whitespace-free word for whitespace tokenisation).
  bool is_single_piece(const std::string& text) const;

 private:
  std::unique_ptr<sentencepiece::SentencePieceProcessor> processor_;
};

}  // namespace rpt
