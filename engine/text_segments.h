// A text as segments (documents/segmenter.h) on its way through the engine: each segment made
// ready for the model, cut where it is longer than the model reads or translates whole
// (prepare_segments, segment_limits), and the segments' results put back into the text's layout
// (join_results): each hypothesis is the segments' hypotheses of the same rank between the
// text's separators (a segment with fewer hypotheses gives its last), so the layout around the
// segments comes back byte for byte.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "documents/document.h"
#include "documents/segmenter.h"
#include "engine/glossary.h"
#include "engine/translator.h"

namespace rpt {

// How prepare_source makes a segment ready: the direction it is translated in (the prefix the
// model reads first) and what may rewrite it.
struct SourcePreparation {
  std::size_t language_pair = 0;             // index into Model::language_pairs()
  const SpanProtector* protector = nullptr;  // nullptr: the segment is read as it is
  SpanProtectionOptions spans = {};
  GlossaryUse glossary = {};  // borrows its glossaries
};

// One segment as the model reads it: its protected spans and glossary terms rewritten by
// `how.protector`, tokenized, mapped to source ids, after its language pair's prefix and before
// the model's eos when it asks for one (append_source_eos); the prefix is added after the
// rewriting, so spans and terms are only ever looked for in the segment. The one text-to-ids
// path of rpt-translate and the server; `spans` of the result set only when there is something
// to enforce. No ids when the model reads nothing of it, or most of its letters only as bytes
// or the unknown piece (a script its vocabulary lacks: translated, it comes out as broken
// characters). Throws what the tokenizer throws, InvalidArgument for a pair the model lacks.
PreparedSource prepare_source(const Model& model, const std::string& segment,
                              const SourcePreparation& how);

// How long a segment may be, in ids of its own (PreparedSource::text_ids: the prefix and eos the
// model adds do not count).
struct SegmentLimits {
  // What the model reads: a longer segment is cut anywhere it can be until every part fits, and
  // refused when it cannot be.
  int max_input_length = 1024;
  // What the model translates whole: a longer segment is cut between words only, at every
  // clause mark (documents::cut_at_clauses: a list item by item), then a part still longer at
  // the blank nearest its middle; a part that has neither stays as it is. 0: max_input_length.
  int max_whole = 0;
};

// Half the max_length below which a segment is never cut for its output's sake: a caller that
// asks for a few tokens asks for a short answer, which cutting would multiply.
inline constexpr int kShortestCutForOutput = 64;

// The limits of a segment of `model` translated with `max_length` under `max_input_length`:
// max_whole is the least of max_input_length, the model's max_segment_tokens (config.json, when
// set) and half of max_length (the translation of a segment has up to 1.6 times its source's
// tokens on the demo models' test splits: a longer source would lose its end), that last never
// below kShortestCutForOutput.
SegmentLimits segment_limits(const Model& model, int max_input_length, int max_length);

// Prepares each segment of `text` with `prepare`; a segment over `limits` is cut as they say
// (a text segmented whole, SegmentedText::whole, only above max_input_length)
// (documents::cut_segment) and its parts prepared until every part is within them, and one the
// model reads nothing of (no ids) becomes layout; a cut never falls inside what `keep_together`
// names. The cuts become layout: the blank, and the clause mark before it ("red, green" is "red"
// ", " "green"), come back as they were between the parts' translations. One result per
// remaining segment. Throws InvalidArgument when a segment cannot be cut below
// max_input_length; passes on what `prepare` throws.
std::vector<PreparedSource> prepare_segments(
    documents::SegmentedText& text, const SegmentLimits& limits,
    const std::function<PreparedSource(const std::string& segment)>& prepare,
    const documents::KeepTogether& keep_together = {});

// Where `glossary`'s terms are in a text, for documents::SegmentationOptions::keep_together (a
// term is never cut by a sentence end). `glossary` must outlive the result.
documents::KeepTogether glossary_terms_of(const GlossaryUse& glossary);

// `segments` holds one result per segment of `text`, in order. The joined result has as many
// hypotheses as the segment with most (n_best for a blank text): text, tokens and ids concatenated
// (tokens and ids of the segments only, not of the layout), score the sum of the segments' scores,
// spans_kept and terms_kept when every segment's are; source tokens and protected spans summed,
// glossary terms merged by entry (matches summed, kept when kept everywhere). A text without
// segments (blank) comes back unchanged, score 0.
TranslationResult join_results(const documents::SegmentedText& text,
                               std::vector<TranslationResult> segments, int n_best);

// The same for a document: `segments` holds one result per segment of all its parts in order;
// each part joined as above, then the document rendered per rank (a hypothesis whose markup
// kept a unit's source for tags that did not fit has spans_kept false).
TranslationResult join_document(const documents::Document& document,
                                std::vector<TranslationResult> segments, int n_best);

}  // namespace rpt
