// The Translator facade: text in, hypotheses out.
//
// Thread safety: translate() may be called from several threads at once; each call decodes with
// its own state over the shared, immutable Model. Where the engine keeps backends (the GPU's), a
// call takes the one idle backend kept from an earlier call (copies of a Translator share it), or
// makes its own when another call holds it; a call that fails drops its backend.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "documents/segmenter.h"
#include "engine/batch_decoder.h"
#include "engine/beam_search.h"
#include "engine/engine.h"
#include "engine/model.h"
#include "engine/span_protection.h"

namespace rpt {

struct SourcePreparation;  // engine/text_segments.h

struct TranslatorOptions {
  // Sentences decoded together; as one finishes, the next waiting one joins (in-flight).
  int max_batch_size = 32;
  // Longest accepted source, in tokens (pieces) of its text: the prefix and eos the model adds
  // (Model::max_added_source_ids) do not count. Longer input is refused, never truncated.
  int max_input_length = 1024;
  // Waiting sentences join a running batch once this many can (or every waiting one can): fewer,
  // larger encoder calls, for rows left empty meanwhile. 1: each joins as soon as a slot frees;
  // kAdmissionGroupByDevice: the device's measured best (admission_group_for). Translations do
  // not change (batch invariance); only speed does (docs/engine.md).
  int admission_group = kAdmissionGroupByDevice;
  // Which of the model's directions (Model::language_pairs) every source is translated in: the
  // prefix the model reads before it; pick_language_pair (engine/language_pair.h) finds it by
  // languages.
  std::size_t language_pair = 0;
};

struct TranslationHypothesis {
  std::string text;                 // detokenized
  std::vector<std::string> tokens;  // target pieces
  std::vector<int> ids;             // target ids, EOS excluded
  float score = 0.0f;               // cumulative log-prob / length penalty
  // Every protected span of the source is in `text`, exactly as often (span_protection.h);
  // true when protection was off or the source has none.
  bool spans_kept = true;
  // Every glossary term the source matched has its target in `text` (at least as often);
  // true without a glossary match.
  bool terms_kept = true;
};

// A glossary entry the source matched, and whether the best hypothesis holds its target.
struct GlossaryTermResult {
  std::string source;
  std::string target;
  int matches = 0;  // occurrences in the source
  bool kept = true;
};

struct TranslationResult {
  std::vector<TranslationHypothesis> hypotheses;  // n_best, best first
  int source_tokens = 0;
  int protected_spans = 0;  // spans protected in the source (0 with protection off)
  std::vector<GlossaryTermResult> glossary_terms;  // in the order of their first match
  int segments = 1;  // of a text (engine/text_result.h): segments translated, 0 when blank
};

// One raw sentence made ready for a BatchDecoder: source ids of the text the model reads, and
// what span protection did to it (nullptr: off).
struct PreparedSource {
  std::vector<int> ids;
  std::shared_ptr<const ProtectedSource> spans;
  // Of `ids`, those the model adds around the text: its language pair's prefix and the eos. Input
  // limits count the rest, the text's own.
  int added_ids = 0;
  int text_ids() const { return static_cast<int>(ids.size()) - added_ids; }
};

// Finished hypotheses as text: detokenized, with protected spans restored when `spans` is set.
TranslationResult make_result(const Model& model, const SpanProtector* protector,
                              const ProtectedSource* spans, std::vector<Hypothesis> hypotheses,
                              int source_tokens);

class Translator {
 public:
  // Computes on the CPU.
  explicit Translator(std::shared_ptr<const Model> model, TranslatorOptions options = {});
  // Computes where `engine` does (Engine::create); translators may share one engine.
  explicit Translator(std::shared_ptr<const Engine> engine, TranslatorOptions options = {});

  // Translates raw sentences (tokenized with the model's source tokenizer), their protected
  // spans kept unless `spans` turns protection off. Throws InvalidArgument for an empty or
  // over-long sentence or bad options, before any work.
  // With `glossary`, its terms are enforced in every sentence (engine/glossary.h).
  std::vector<TranslationResult> translate(const std::vector<std::string>& sources,
                                           const DecodingOptions& options,
                                           const SpanProtectionOptions& spans = {},
                                           const GlossaryUse& glossary = {}) const;
  // The same from source pieces (already tokenized).
  std::vector<TranslationResult> translate_tokens(
      const std::vector<std::vector<std::string>>& sources, const DecodingOptions& options) const;
  // The same from source ids.
  std::vector<std::vector<Hypothesis>> translate_ids(const std::vector<std::vector<int>>& sources,
                                                     const DecodingOptions& options) const;

  // For callers that run their own BatchDecoder (rpt-translate streams its input): the checks
  // translate() makes of the options and of one raw sentence (made ready with its spans
  // protected; InvalidArgument naming sentence `index`; no ids for words in a script the model
  // cannot read, which translate() returns as they are), and finished hypotheses as text.
  void check_options(const DecodingOptions& options) const;
  PreparedSource prepare(const std::string& source, std::size_t index,
                         const SpanProtectionOptions& spans,
                         const GlossaryUse& glossary = {}) const;
  TranslationResult to_result(std::vector<Hypothesis> hypotheses,
                              const PreparedSource& source) const;
  // A text's segments (documents/segmenter.h) made ready one by one as by prepare(): a segment
  // over max_input_length tokens is cut (documents::cut_segment) until every part fits, one over
  // what the model translates whole with `decoding`'s max_length between words
  // (segment_limits, engine/text_segments.h), and one the model reads nothing of becomes
  // layout. InvalidArgument naming text `index` when a segment cannot be cut below the limit.
  std::vector<PreparedSource> prepare_segments(documents::SegmentedText& text, std::size_t index,
                                               const DecodingOptions& decoding,
                                               const SpanProtectionOptions& spans,
                                               const GlossaryUse& glossary = {}) const;

  const Model& model() const { return *model_; }
  const Engine& engine() const { return *engine_; }
  const std::shared_ptr<const Engine>& shared_engine() const { return engine_; }
  const TranslatorOptions& options() const { return options_; }
  const SpanProtector& span_protector() const { return *span_protector_; }

 private:
  // `ids` holds `added_ids` beside the text's own (PreparedSource::added_ids).
  void check_source(const std::vector<int>& ids, int added_ids, std::size_t index) const;
  // How prepare_source reads a sentence for this translator (its language pair and protector).
  SourcePreparation preparation(const SpanProtectionOptions& spans,
                                const GlossaryUse& glossary) const;
  // Decodes every request (ids 0..n-1, checked), max_batch_size at a time; results by id.
  std::vector<std::vector<Hypothesis>> decode(std::vector<SentenceRequest> requests) const;

  // The backend kept between calls (Engine::keeps_backends).
  struct IdleBackend {
    std::mutex mutex;
    std::unique_ptr<DecoderBackend> backend;
  };

  std::shared_ptr<const Engine> engine_;
  std::shared_ptr<IdleBackend> idle_ = std::make_shared<IdleBackend>();
  std::shared_ptr<const Model> model_;
  std::shared_ptr<const SpanProtector> span_protector_;
  TranslatorOptions options_;
};

}  // namespace rpt
