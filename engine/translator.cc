#include "engine/translator.h"

#include <algorithm>
#include <numeric>

#include "engine/batch_decoder.h"
#include "kernels/errors.h"

namespace rpt {

Translator::Translator(std::shared_ptr<const Model> model, TranslatorOptions options)
    : Translator(Engine::create(std::move(model)), options) {}

Translator::Translator(std::shared_ptr<const Engine> engine, TranslatorOptions options)
    : engine_(std::move(engine)), options_(options) {
  RPT_CHECK(engine_ != nullptr, InvalidArgument, "Translator needs an engine");
  model_ = engine_->shared_model();
  RPT_CHECK(options_.max_batch_size >= 1, InvalidArgument, "max_batch_size must be >= 1");
  RPT_CHECK(options_.max_input_length >= 1 &&
                options_.max_input_length <= model_->max_sequence_length(),
            InvalidArgument, "max_input_length must be in [1, ", model_->max_sequence_length(),
            "]");
}

void Translator::check_options(const DecodingOptions& options) const {
  validate(options);
  RPT_CHECK(options.max_length < model_->max_sequence_length(), InvalidArgument,
            "max_length must be below the model's maximum sequence length ",
            model_->max_sequence_length());
}

void Translator::check_source(const std::vector<int>& ids, std::size_t index) const {
  RPT_CHECK(!ids.empty(), InvalidArgument, "sentence ", index, " is empty");
  RPT_CHECK(static_cast<int>(ids.size()) <= options_.max_input_length, InvalidArgument,
            "sentence ", index, " has ", ids.size(), " tokens, over the limit of ",
            options_.max_input_length);
}

std::vector<int> Translator::source_ids(const std::string& source, std::size_t index) const {
  std::vector<int> ids;
  for (const std::string& piece : model_->source_tokenizer().encode(source)) {
    ids.push_back(model_->source_vocabulary().to_id(piece));
  }
  check_source(ids, index);
  return ids;
}

TranslationResult Translator::to_result(const std::vector<Hypothesis>& hypotheses,
                                        int source_tokens) const {
  const Vocabulary& target_vocabulary = model_->target_vocabulary();
  TranslationResult result;
  result.source_tokens = source_tokens;
  for (const Hypothesis& h : hypotheses) {
    TranslationHypothesis out;
    out.ids = h.ids;
    out.score = h.score;
    for (int id : h.ids) out.tokens.push_back(target_vocabulary.to_token(id));
    out.text = model_->target_tokenizer().decode(out.tokens);
    result.hypotheses.push_back(std::move(out));
  }
  return result;
}

std::vector<std::vector<Hypothesis>> Translator::translate_ids(
    const std::vector<std::vector<int>>& sources, const DecodingOptions& options) const {
  check_options(options);
  for (std::size_t i = 0; i < sources.size(); ++i) check_source(sources[i], i);
  // Longest first: encoder batches of similar lengths waste less padding.
  std::vector<std::size_t> order(sources.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return sources[a].size() > sources[b].size();
  });

  std::vector<std::vector<Hypothesis>> results(sources.size());
  BatchDecoder decoder(engine_);
  std::size_t next = 0;
  while (next < order.size() || !decoder.empty()) {
    const auto room = static_cast<std::size_t>(options_.max_batch_size - decoder.active_sentences());
    std::vector<SentenceRequest> admitted;
    for (; next < order.size() && admitted.size() < room; ++next) {
      admitted.push_back({.id = order[next], .source_ids = sources[order[next]], .options = options});
    }
    decoder.add(admitted);
    for (FinishedSentence& done : decoder.step()) {
      results[done.id] = std::move(done.hypotheses);
    }
  }
  return results;
}

std::vector<TranslationResult> Translator::translate_tokens(
    const std::vector<std::vector<std::string>>& sources, const DecodingOptions& options) const {
  const Vocabulary& source_vocabulary = model_->source_vocabulary();
  std::vector<std::vector<int>> ids(sources.size());
  for (std::size_t i = 0; i < sources.size(); ++i) {
    for (const std::string& token : sources[i]) ids[i].push_back(source_vocabulary.to_id(token));
  }
  const auto hypotheses = translate_ids(ids, options);

  std::vector<TranslationResult> results;
  for (std::size_t i = 0; i < sources.size(); ++i) {
    results.push_back(to_result(hypotheses[i], static_cast<int>(sources[i].size())));
  }
  return results;
}

std::vector<TranslationResult> Translator::translate(const std::vector<std::string>& sources,
                                                     const DecodingOptions& options) const {
  std::vector<std::vector<std::string>> pieces(sources.size());
  for (std::size_t i = 0; i < sources.size(); ++i) {
    pieces[i] = model_->source_tokenizer().encode(sources[i]);
    RPT_CHECK(!pieces[i].empty(), InvalidArgument, "sentence ", i, " is empty");
  }
  return translate_tokens(pieces, options);
}

}  // namespace rpt
