#include "engine/tokenizer.h"

#include <sentencepiece_processor.h>

#include <sstream>

#include "kernels/errors.h"

namespace rpt {

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

}  // namespace rpt
