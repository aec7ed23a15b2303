// rpt-translate's loop: input lines join the in-flight batch as they arrive and as room frees up,
// and each translation is handed on in input order as soon as every earlier one has been (output
// streams while input is read). With `decoders` > 1, that many batch decoders run on as many
// threads (the caller's and decoders - 1 more), each taking lines from one shared, longest-first
// block; the output is the same, line for line (docs/engine.md).
#pragma once

#include <functional>

#include "documents/segmenter.h"
#include "engine/translator.h"
#include "cli/line_reader.h"
#include "cli/progress_line.h"

namespace rpt::tools {

// Where the decoding threads' time went, summed over them (--verbose prints it): what a GPU run
// waits on besides the device shows here.
struct StageTimes {
  double prepare_seconds = 0;  // reading lines, span protection, tokenizing
  double encode_seconds = 0;   // BatchDecoder::add: the encoder calls
  double step_seconds = 0;     // BatchDecoder::step: decoder steps and beam search
  double results_seconds = 0;  // span restoration, detokenizing
  double output_seconds = 0;   // writing, in input order
  long encode_calls = 0;
  long encoded_sentences = 0;
  long steps = 0;
  long step_rows = 0;      // summed over the steps
  StepGraphCounts graphs;  // the decoders' GPU steps
  StepProfile profile;     // with --gpu-profile: the decoders' GPU steps, part by part
};

struct StreamTotals {
  long lines = 0;
  long sentences = 0;      // segments translated
  long target_tokens = 0;  // of the best hypotheses
  long protected_spans = 0;
  long spans_lost = 0;       // best hypotheses that did not keep every span of their source
  long glossary_terms = 0;   // glossary entries matched (per sentence)
  long glossary_missed = 0;  // of those, targets the best hypothesis does not hold
  StageTimes times;
};

struct StreamOptions {
  DecodingOptions decoding;
  // How each line is cut into segments (documents/segmenter.h); its layout comes back as it was.
  documents::SegmentationOptions segmentation;
  SpanProtectionOptions spans;
  GlossaryUse glossary;  // borrowed: outlives the call
  int decoders = 1;      // batch decoders, each on its own thread
};

// Translates every line of `input` with `translator`'s batch size: each line cut into segments,
// the segments decoded as the batch's rows, the line put back together (a blank line comes back
// as it was, without decoding). `progress` counts segments; `write` is called once per line, in
// input order, from one thread at a time, with whether the input line ended with '\n' (false
// only for a last line without one). Throws InvalidArgument for bad options or a line that
// cannot be translated: the lines before it have been written.
using LineWriter = std::function<void(const TranslationResult&, bool newline)>;
StreamTotals translate_stream(const Translator& translator, const StreamOptions& options,
                              LineReader& input, ProgressLine& progress, const LineWriter& write);

}  // namespace rpt::tools
