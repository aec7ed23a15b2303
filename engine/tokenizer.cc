#include "engine/tokenizer.h"

#include <sentencepiece_processor.h>

#include <cctype>
#include <sstream>

#include "kernels/errors.h"

namespace rpt {

std::optional<unsigned char> fallback_byte(std::string_view piece) {
  if (piece.size() != 6 || !piece.starts_with("<0x") || piece.back() != '>') return std::nullopt;
  unsigned byte = 0;
  for (const char digit : piece.substr(3, 2)) {
    const int value = std::isdigit(static_cast<unsigned char>(digit)) ? digit - '0'
                      : digit >= 'A' && digit <= 'F'                  ? digit - 'A' + 10
                                                                      : -1;
    if (value < 0) return std::nullopt;
    byte = byte * 16 + static_cast<unsigned>(value);
  }
  return static_cast<unsigned char>(byte);
}

Tokenizer::Tokenizer(const std::string& model_path) {
  if (model_path.empty()) return;
  processor_ = std::make_unique<sentencepiece::SentencePieceProcessor>();
  const auto status = processor_->Load(model_path);
  RPT_CHECK(status.ok(), ModelError, "cannot load SentencePiece model ", model_path, ": ",
            status.ToString());
}

Tokenizer::~Tokenizer() = default;
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;

std::vector<std::string> Tokenizer::encode(const std::string& text) const {
  std::vector<std::string> pieces;
  if (processor_) {
    const auto status = processor_->Encode(text, &pieces);
    RPT_CHECK(status.ok(), InvalidArgument, "cannot tokenize input: ", status.ToString());
    return pieces;
  }
  std::istringstream words(text);
  for (std::string word; words >> word;) pieces.push_back(word);
  return pieces;
}

std::string Tokenizer::decode(const std::vector<std::string>& pieces) const {
  if (processor_) {
    std::string text;
    const auto status = processor_->Decode(pieces, &text);
    RPT_CHECK(status.ok(), RuntimeFailure, "cannot detokenize output: ", status.ToString());
    return text;
  }
  std::string text;
  for (std::size_t i = 0; i < pieces.size(); ++i) text += (i ? " " : "") + pieces[i];
  return text;
}

std::string Tokenizer::decode(const std::vector<std::string>& pieces,
                              std::vector<std::pair<std::size_t, std::size_t>>* ranges) const {
  ranges->clear();
  if (processor_) {
    const auto decoded = processor_->DecodePiecesAsImmutableProto(pieces);
    for (const auto& piece : decoded.pieces()) ranges->emplace_back(piece.begin(), piece.end());
    RPT_CHECK(ranges->size() == pieces.size(), RuntimeFailure, "detokenizing ", pieces.size(),
              " pieces gave ", ranges->size());
    return decoded.text();
  }
  std::string text;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    if (i) text += ' ';
    ranges->emplace_back(text.size(), text.size() + pieces[i].size());
    text += pieces[i];
  }
  return text;
}

bool Tokenizer::is_single_piece(const std::string& text) const {
  if (text.empty()) return false;
  std::vector<std::string> pieces = encode(text);
  // SentencePiece puts a lone word-boundary piece before a user-defined symbol.
  if (processor_ && pieces.size() == 2 && pieces[0] == "\xe2\x96\x81") pieces.erase(pieces.begin());
  return pieces.size() == 1 && pieces[0] == text;
}

}  // namespace rpt
