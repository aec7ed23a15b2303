#include "tools/stream_translation.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>

#include "engine/batch_decoder.h"

namespace rpt::tools {

namespace {

// Lines are admitted in blocks of up to this many batches, longest first within a block (what
// Translator::translate does for all its input): the batch's last steps then run the block's
// short sentences instead of a long one decoding nearly alone. A block holds only lines already
// read, so a slow pipe is never waited for, and no line waits longer than its block.
constexpr std::size_t kBlockBatches = 8;

}  // namespace

StreamTotals translate_stream(const Translator& translator, const DecodingOptions& options,
                              const SpanProtectionOptions& spans, LineReader& input,
                              ProgressLine& progress,
                              const std::function<void(const TranslationResult&)>& write) {
  translator.check_options(options);
  const auto batch = static_cast<std::size_t>(translator.options().max_batch_size);
  BatchDecoder decoder(translator.shared_engine());
  std::vector<SentenceRequest> block;  // read, waiting for a decoder slot, shortest last
  std::map<std::uint64_t, PreparedSource> sources;     // of the sentences read, not finished
  std::map<std::uint64_t, TranslationResult> waiting;  // finished before an earlier one
  std::uint64_t next_id = 0;
  std::uint64_t next_to_write = 0;
  StreamTotals totals;
  while (true) {
    if (block.empty()) {
      // Wait for input only when there is nothing to decode meanwhile.
      for (auto line = input.next(decoder.empty()); line; line = input.next(false)) {
        const PreparedSource& source =
            sources.emplace(next_id, translator.prepare(*line, next_id, spans)).first->second;
        block.push_back({.id = next_id++,
                         .source_ids = source.ids,
                         .options = options,
                         .constraints = source.spans ? source.spans->constraints : nullptr});
        if (block.size() == batch * kBlockBatches) break;
      }
      std::stable_sort(block.begin(), block.end(), [](const auto& a, const auto& b) {
        return a.source_ids.size() > b.source_ids.size();
      });
    }
    if (block.empty() && decoder.empty()) break;  // the input has ended
    const std::size_t room = batch - static_cast<std::size_t>(decoder.active_sentences());
    const std::size_t admitted = std::min(room, block.size());
    if (admitted > 0) {
      decoder.add({std::make_move_iterator(block.begin()),
                   std::make_move_iterator(block.begin() + static_cast<long>(admitted))});
      block.erase(block.begin(), block.begin() + static_cast<long>(admitted));
    }
    for (FinishedSentence& done : decoder.step()) {
      auto source = sources.find(done.id);
      waiting.emplace(done.id, translator.to_result(std::move(done.hypotheses), source->second));
      sources.erase(source);
    }
    for (auto it = waiting.find(next_to_write); it != waiting.end();
         it = waiting.find(++next_to_write)) {
      write(it->second);
      ++totals.sentences;
      totals.protected_spans += it->second.protected_spans;
      if (!it->second.hypotheses.empty()) {
        totals.target_tokens += static_cast<long>(it->second.hypotheses[0].ids.size());
        totals.spans_lost += it->second.hypotheses[0].spans_kept ? 0 : 1;
      }
      waiting.erase(it);
    }
    progress.update(totals.sentences, input.total());
  }
  return totals;
}

}  // namespace rpt::tools
