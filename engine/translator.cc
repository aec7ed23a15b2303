#include "engine/translator.h"

#include <algorithm>

#include "engine/batch_decoder.h"
#include "engine/text_segments.h"
#include "kernels/errors.h"

namespace rpt {

Translator::Translator(std::shared_ptr<const Model> model, TranslatorOptions options)
    : Translator(Engine::create(std::move(model)), options) {}

Translator::Translator(std::shared_ptr<const Engine> engine, TranslatorOptions options)
    : engine_(std::move(engine)), options_(options) {
  RPT_CHECK(engine_ != nullptr, InvalidArgument, "Translator needs an engine");
  model_ = engine_->shared_model();
  span_protector_ = std::make_shared<const SpanProtector>(model_);
  RPT_CHECK(options_.max_batch_size >= 1, InvalidArgument, "max_batch_size must be >= 1");
  options_.admission_group = admission_group_for(engine_->options().device,
                                                 options_.admission_group, options_.max_batch_size);
  RPT_CHECK(options_.language_pair < model_->language_pairs().size(), InvalidArgument,
            "language_pair ", options_.language_pair, " is not one of the model's ",
            model_->language_pairs().size());
  // The text's ids and what the model adds around them fit its longest sequence.
  const int longest_text = model_->max_sequence_length() - model_->max_added_source_ids();
  RPT_CHECK(options_.max_input_length >= 1 && options_.max_input_length <= longest_text,
            InvalidArgument, "max_input_length must be in [1, ", longest_text,
            "]: the model reads at most ", model_->max_sequence_length(), " ids, ",
            model_->max_added_source_ids(), " of them its prefix and eos");
}

void Translator::check_options(const DecodingOptions& options) const {
  validate(options);
  RPT_CHECK(options.max_length < model_->max_sequence_length(), InvalidArgument,
            "max_length must be below the model's maximum sequence length ",
            model_->max_sequence_length());
}

void Translator::check_source(const std::vector<int>& ids, int added_ids, std::size_t index) const {
  RPT_CHECK(!ids.empty(), InvalidArgument, "sentence ", index, " is empty");
  const int own = static_cast<int>(ids.size()) - added_ids;
  RPT_CHECK(own <= options_.max_input_length, InvalidArgument, "sentence ", index, " has ", own,
            " tokens, over the limit of ", options_.max_input_length);
}

SourcePreparation Translator::preparation(const SpanProtectionOptions& spans,
                                          const GlossaryUse& glossary) const {
  return {.language_pair = options_.language_pair,
          .protector = span_protector_.get(),
          .spans = spans,
          .glossary = glossary};
}

PreparedSource Translator::prepare(const std::string& source, std::size_t index,
                                   const SpanProtectionOptions& spans,
                                   const GlossaryUse& glossary) const {
  PreparedSource prepared = prepare_source(*model_, source, preparation(spans, glossary));
  // Words the model cannot read (prepare_source): no ids, the sentence is kept as it is.
  if (prepared.ids.empty() && documents::has_words(source)) return prepared;
  check_source(prepared.ids, prepared.added_ids, index);
  return prepared;
}

std::vector<PreparedSource> Translator::prepare_segments(documents::SegmentedText& text,
                                                         std::size_t index,
                                                         const DecodingOptions& decoding,
                                                         const SpanProtectionOptions& spans,
                                                         const GlossaryUse& glossary) const {
  try {
    const SourcePreparation how = preparation(spans, glossary);
    return rpt::prepare_segments(
        text, segment_limits(*model_, options_.max_input_length, decoding.max_length),
        [&](const std::string& segment) { return prepare_source(*model_, segment, how); },
        glossary.empty() ? documents::KeepTogether() : glossary_terms_of(glossary));
  } catch (const InvalidArgument& e) {
    throw InvalidArgument("sentence " + std::to_string(index) + ": " + e.message(), __FILE__,
                          __LINE__);
  }
}

TranslationResult make_result(const Model& model, const SpanProtector* protector,
                              const ProtectedSource* spans, std::vector<Hypothesis> hypotheses,
                              int source_tokens) {
  const Vocabulary& target_vocabulary = model.target_vocabulary();
  TranslationResult result;
  result.source_tokens = source_tokens;
  if (!protector) spans = nullptr;
  result.protected_spans = spans ? spans->spans : 0;
  if (spans) {
    for (const ProtectedSource::Term& term : spans->terms) {
      result.glossary_terms.push_back({term.source, term.target, term.matches, false});
    }
  }
  for (std::size_t k = 0; k < hypotheses.size(); ++k) {
    Hypothesis& h = hypotheses[k];
    TranslationHypothesis out;
    for (int id : h.ids) out.tokens.push_back(target_vocabulary.to_token(id));
    if (spans) {
      RestoredTranslation restored = protector->restore(*spans, h.ids);
      out.text = std::move(restored.text);
      out.spans_kept = restored.spans_kept;
      for (std::size_t t = 0; t < restored.terms_kept.size(); ++t) {
        out.terms_kept = out.terms_kept && restored.terms_kept[t];
        if (k == 0) result.glossary_terms[t].kept = restored.terms_kept[t];
      }
    } else {
      out.text = model.target_tokenizer().decode(out.tokens);
    }
    out.ids = std::move(h.ids);
    out.score = h.score;
    result.hypotheses.push_back(std::move(out));
  }
  return result;
}

TranslationResult Translator::to_result(std::vector<Hypothesis> hypotheses,
                                        const PreparedSource& source) const {
  return make_result(*model_, span_protector_.get(), source.spans.get(), std::move(hypotheses),
                     static_cast<int>(source.ids.size()));
}

std::vector<std::vector<Hypothesis>> Translator::translate_ids(
    const std::vector<std::vector<int>>& sources, const DecodingOptions& options) const {
  check_options(options);
  std::vector<SentenceRequest> requests;
  for (std::size_t i = 0; i < sources.size(); ++i) {
    check_source(sources[i], 0, i);
    requests.push_back(
        {.id = i, .source_ids = sources[i], .options = options, .constraints = nullptr});
  }
  return decode(std::move(requests));
}

std::vector<std::vector<Hypothesis>> Translator::decode(
    std::vector<SentenceRequest> requests) const {
  // Longest first: sentences decoded together have similar lengths and finish near each other,
  // which keeps the batch's steps full.
  std::stable_sort(requests.begin(), requests.end(), [](const auto& a, const auto& b) {
    return a.source_ids.size() > b.source_ids.size();
  });
  std::vector<std::vector<Hypothesis>> results(requests.size());
  std::unique_ptr<DecoderBackend> kept;
  if (engine_->keeps_backends()) {
    const std::lock_guard lock(idle_->mutex);
    kept = std::move(idle_->backend);
  }
  BatchDecoder decoder(engine_, std::move(kept));
  std::size_t next = 0;
  while (next < requests.size() || !decoder.empty()) {
    const std::size_t count = sentences_to_admit(
        static_cast<std::size_t>(options_.max_batch_size - decoder.active_sentences()),
        requests.size() - next, decoder.empty(), options_.admission_group);
    std::vector<SentenceRequest> admitted;
    for (const std::size_t end = next + count; next < end; ++next) {
      admitted.push_back(std::move(requests[next]));
    }
    decoder.add(admitted);
    for (FinishedSentence& done : decoder.step()) {
      results[done.id] = std::move(done.hypotheses);
    }
  }
  if (engine_->keeps_backends()) {
    std::unique_ptr<DecoderBackend> finished = decoder.release_backend();
    const std::lock_guard lock(idle_->mutex);
    if (!idle_->backend) idle_->backend = std::move(finished);
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
    results.push_back(
        make_result(*model_, nullptr, nullptr, hypotheses[i], static_cast<int>(sources[i].size())));
  }
  return results;
}

std::vector<TranslationResult> Translator::translate(const std::vector<std::string>& sources,
                                                     const DecodingOptions& options,
                                                     const SpanProtectionOptions& spans,
                                                     const GlossaryUse& glossary) const {
  check_options(options);
  std::vector<PreparedSource> prepared;
  prepared.reserve(sources.size());
  for (std::size_t i = 0; i < sources.size(); ++i)
    prepared.push_back(prepare(sources[i], i, spans, glossary));
  std::vector<SentenceRequest> requests;
  for (const PreparedSource& source : prepared) {
    if (source.ids.empty()) continue;  // unreadable: kept as it is
    requests.push_back({.id = requests.size(),
                        .source_ids = source.ids,
                        .options = options,
                        .constraints = source.spans ? source.spans->constraints : nullptr});
  }
  auto hypotheses = decode(std::move(requests));
  std::vector<TranslationResult> results;
  auto decoded = hypotheses.begin();
  for (std::size_t i = 0; i < sources.size(); ++i) {
    if (prepared[i].ids.empty()) {  // all layout: as a blank text comes back
      results.push_back(
          join_results({.segments = {}, .separators = {sources[i]}}, {}, options.n_best));
      continue;
    }
    results.push_back(to_result(std::move(*decoded++), prepared[i]));
  }
  return results;
}

}  // namespace rpt
