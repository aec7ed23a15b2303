// Plain text cut into the segments a model translates and the layout around them (docs/documents.md
// "Segmentation"): segment_text("  Saved. Open it?\n\n- Done\n") gives separators {"  ", " ",
// "\n\n- ", "\n"} and segments {"Saved.", "Open it?", "Done"}. Segments are exact substrings;
// join_segments(s, s.segments) gives the text back byte for byte. Runs of symbols, emoji or
// placeholders alone, whitespace, list markers and indentation are layout (has_words false), and
// so are quotation marks or brackets around a whole segment ("\"Save it.\"" gives "Save it."). No
// boundary falls inside a protected span, between a pair of tags or inside a bracket pair
// closed in the paragraph (bracket_pairs.h). A text that is one ICU message with cases is
// segmented case by case, its syntax layout, and a sentence around one is first moved into its
// cases (documents/icu_message.h): then the segments and separators join to that text, not to
// the one given. Thread-safe.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "documents/icu_message.h"

namespace rpt::documents {

enum class SplitSentences {
  kAuto,       // sentences and line breaks (the default)
  kNewlines,   // line breaks only: each line one segment
  kSentences,  // sentences and blank lines; a single line break stays inside its sentence
  kNone,       // the whole text (its blank edges apart) one segment
};

// "auto", "newlines", "sentences", "none"; parse throws std::invalid_argument naming the choices.
SplitSentences parse_split_sentences(std::string_view name);
const char* split_sentences_name(SplitSentences split);

// Byte ranges [first, second) of a text that no sentence end may cut.
using KeepTogether =
    std::function<std::vector<std::pair<std::size_t, std::size_t>>(std::string_view text)>;

struct SegmentationOptions {
  SplitSentences split = SplitSentences::kAuto;
  // ICU locale of the source language ("en", "de", ...): its sentence rules and the
  // abbreviations after which a full stop ends no sentence ("e.g.", "Mr.").
  std::string language = "en";
  // The target language ("ru", "pl"; empty: unknown): a plural message gains the cases its
  // plural rules need and the source lacks (icu_message.h, with_target_plural_cases).
  std::string target_language = {};
  // Called on each line or paragraph before it is cut: what must stay in one segment besides
  // protected spans (the call's glossary terms: "Acme Inc. Cloud"). Empty: nothing more.
  KeepTogether keep_together;
  // Markup at a segment's edges (a tag standing alone, a pair around all of it) is layout, kept
  // out of what the model reads and put back at the same edge. false: it is text, for callers
  // that send markup to the model as plain text (span protection off).
  bool edge_markup_is_layout = true;
  // The text is a Markdown document: indented code blocks are layout too (fenced ones always
  // are), and a paragraph wrapped over lines is one block, cut into sentences whatever `split`
  // but kNewlines says (documents/markdown_blocks.h).
  bool markdown = false;
};

struct SegmentedText {
  std::vector<std::string> segments;    // what the model translates, never blank
  std::vector<std::string> separators;  // segments.size() + 1: [i] precedes segments[i]
  // Segmented with SplitSentences::kNone: each segment is translated whole, cut only where it is
  // longer than the model reads (never for what it translates whole: engine/text_segments.h).
  bool whole = false;
  // The segments are the case texts of one ICU message (icu_message.h): join_segments writes
  // their translations back as ICU reads them (apostrophes before syntax doubled).
  bool message_cases = false;
  // The plural cases added for the target language, their sample numbers put back as '#' by
  // join_segments (with_plural_samples_restored); the segments join to the message with them.
  std::vector<PluralSample> plural_samples = {};
};

// `text` must be valid UTF-8 (the callers check it; invalid bytes are kept as layout).
SegmentedText segment_text(std::string_view text, const SegmentationOptions& options = {});

// True when `segment` has a letter or digit outside its protected spans: something to translate
// ("%s", "{0}", "<br/>", "&amp;" alone have none, and are layout).
bool has_words(std::string_view segment);

// Where cut_segment may cut.
enum class CutPlaces {
  kAnywhere,      // a clause mark, else a blank, else the code point boundary nearest the middle
  kBetweenWords,  // a clause mark, else a blank; a segment with neither stays whole
  kClauses,       // a clause mark only
};

// Cuts segments[index] in two where it is too long for a model (docs/documents.md, "Long
// texts"): at the clause mark (, ; : before blank, and the full-width ，；：、 with or without
// it) nearest the middle, the mark and the blank after it becoming layout ("a, b" is "a" ", "
// "b": a model given "a," may repeat or drop the comma, and the list loses its separator), else
// at the blank run nearest the middle (the blank becoming layout), else at the code point
// boundary nearest the middle (no blank: e.g. Chinese), as far as `places` allows; never inside
// a protected span, nor inside what `keep_together` names (glossary terms), and outside tag pairs
// where it can. False, and nothing changed, when it cannot be cut.
bool cut_segment(SegmentedText& text, std::size_t index, const KeepTogether& keep_together = {},
                 CutPlaces places = CutPlaces::kAnywhere);

// Cuts segments[index] at every clause mark cut_segment would cut at: a list item by item, a
// sentence clause by clause. The number of segments it became (1: it has no such mark).
std::size_t cut_at_clauses(SegmentedText& text, std::size_t index,
                           const KeepTogether& keep_together = {});

// Makes segments[index] part of the layout between its neighbours (a segment a model cannot
// read: it comes back as it was).
void keep_as_layout(SegmentedText& text, std::size_t index);

// The separators with `translations` (one per segment) between them.
std::string join_segments(const SegmentedText& text, const std::vector<std::string>& translations);

}  // namespace rpt::documents
