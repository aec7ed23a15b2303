// Protected spans through translation (docs/protected-spans.md): each placeholder, tag, entity or
// escape of a source text (spans/protected_spans.h) appears in the translation exactly as often as
// in the source, verbatim. protect() rewrites the source and states the decoder's constraints: a
// span that is one piece in both vocabularies is copied; another is masked by an unused
// placeholder piece (a sentinel) and swapped back, or, with no sentinel left, its target pieces
// become a phrase; placeholder pieces the source lacks are banned; an accelerator marker is taken
// out and put back; glossary terms are masked or phrased likewise (GlossaryMethod). restore()
// gives the translation's text and whether every span was kept. Thread-safe: one per model.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/decoding_constraints.h"
#include "engine/glossary.h"
#include "engine/model.h"
#include "spans/protected_spans.h"

namespace rpt {

struct SpanProtectionOptions {
  bool enabled = true;       // false: the text is translated as it is, nothing constrained
  bool accelerators = true;  // treat & and _ accelerator markers (SpanRecognitionOptions)
  // Spans that are not one piece of their own are masked by sentinels; false: the model reads
  // them as they are and their own target pieces are the constraint.
  bool mask = true;
};

// What protect() did to one source text.
struct ProtectedSource {
  std::string text;  // what the model reads
  // What the translation must and must not contain; nullptr with protection off.
  std::shared_ptr<const DecodingConstraints> constraints;
  int spans = 0;  // spans found (accelerator markers included)
  // Masked spans: where the translation has `target_id`, `original` goes back.
  struct Mask {
    int target_id = 0;
    std::string original;  // the span, or a glossary term's target text
    // A glossary target that may take a capital where it opens the translation.
    bool initial_capital = false;
    bool term = false;  // a glossary target (a word of its own), not a span
  };
  std::vector<Mask> masks;
  std::vector<std::string> expected;  // the source's span texts (multiset), the marker included
  // Words the model cannot read (engine/unreadable_words.h), masked like spans: each must
  // come back as often as the source has it. Not in `expected`: no recognizer finds them.
  std::vector<std::string> words;
  bool accelerators = true;        // SpanProtectionOptions::accelerators
  std::string accelerator_marker;  // "&" or "_"; empty: none
  std::string accelerator_letter;  // the character the marker stood before
  // Glossary entries the source matched, in the order of their first match.
  struct Term {
    std::string source;  // as the glossary writes them
    std::string target;
    int matches = 0;           // occurrences in the source
    bool capitalized = false;  // one has a capital the entry lacks (count_term)
  };
  std::vector<Term> terms;
};

struct RestoredTranslation {
  std::string text;
  // The translation's spans are exactly the source's (and its accelerator marker is back).
  bool spans_kept = true;
  // [ProtectedSource::terms]: the translation holds the term's target at least as often as the
  // source holds the term.
  std::vector<bool> terms_kept;
};

class SpanProtector {
 public:
  explicit SpanProtector(std::shared_ptr<const Model> model);

  // With `glossary`, its terms are enforced too (also with span protection off).
  ProtectedSource protect(std::string_view source, const SpanProtectionOptions& options,
                          const GlossaryUse& glossary = {}) const;
  // The text of target ids decoded for `source`.
  RestoredTranslation restore(const ProtectedSource& source,
                              const std::vector<int>& target_ids) const;

  // Throws InvalidArgument naming `what`[i] for the first entry of `glossary` whose target the
  // model's target vocabulary cannot write (a character no piece holds).
  void check_glossary(const Glossary& glossary, std::string_view what) const;

  // Placeholder pieces available as sentinels (in both vocabularies, one piece each).
  int sentinels() const { return static_cast<int>(sentinels_.size()); }

 private:
  struct Sentinel {
    std::string text;
    int target_id = 0;
    SpanKind kind = SpanKind::kPrintf;
    std::string tag_name;       // for tags: the element name; empty otherwise
    bool closing = false;       // </name>
    bool stands_alone = false;  // <name/>, <br>, <hr>: a tag that encloses nothing
  };
  friend class SpanMasking;
  // Characters that open (or close) spans; a translation may hold them only where its source
  // does.
  static constexpr std::array<char, 8> kSpanOpeners = {'%', '$', '&', '{', '}', '<', '>', '\\'};

  // Sentinels, and with `spans` pieces holding a span opener the source lacks, minus the
  // phrases' ids.
  std::vector<int> banned_tokens(std::string_view source, bool spans,
                                 const std::vector<PhraseConstraint>& phrases) const;
  // The target ids of `text` as the tokenizer writes it (a word start included), or empty when
  // a piece is not in the vocabulary.
  std::vector<int> target_ids(const std::string& text) const;
  // Symbol spans (✓ 😀) the target side writes as pieces of their own are no spans: the model
  // writes them as it learnt; the others (byte pieces, unknown) are protected like placeholders.
  void drop_writable_symbols(std::string_view source, std::vector<ProtectedSpan>& spans) const;
  // True when the target side writes `text` with pieces of its own (no byte piece, no unknown).
  bool writable(std::string_view text) const;
  // True when the source side reads `text` as pieces of its own (no byte piece, no unknown).
  bool readable(std::string_view text) const;

  std::shared_ptr<const Model> model_;
  std::vector<Sentinel> sentinels_;
  std::array<std::vector<int>, kSpanOpeners.size()> opener_pieces_;  // target ids per opener
  // [target vocabulary]: each piece's text ("▁" as a space, a byte piece as its byte), for
  // glossary targets matched as text (DecodingConstraints).
  std::shared_ptr<const std::vector<std::string>> token_texts_;
};

}  // namespace rpt
