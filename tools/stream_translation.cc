#include "tools/stream_translation.h"

#include <cstdint>
#include <map>

#include "engine/batch_decoder.h"

namespace rpt::tools {

StreamTotals translate_stream(const Translator& translator, const DecodingOptions& options,
                              LineReader& input, ProgressLine& progress,
                              const std::function<void(const TranslationResult&)>& write) {
  translator.check_options(options);
  const auto room = static_cast<std::size_t>(translator.options().max_batch_size);
  BatchDecoder decoder(translator.shared_engine());
  std::map<std::uint64_t, int> source_tokens;              // of the sentences decoding
  std::map<std::uint64_t, TranslationResult> waiting;      // finished before an earlier one
  std::uint64_t next_id = 0;
  std::uint64_t next_to_write = 0;
  StreamTotals totals;
  while (true) {
    std::vector<SentenceRequest> requests;
    while (static_cast<std::size_t>(decoder.active_sentences()) + requests.size() < room) {
      // Wait for input only when there is nothing to decode meanwhile.
      auto line = input.next(decoder.empty() && requests.empty());
      if (!line) break;
      std::vector<int> ids = translator.source_ids(*line, next_id);
      source_tokens[next_id] = static_cast<int>(ids.size());
      requests.push_back({.id = next_id++, .source_ids = std::move(ids), .options = options});
    }
    if (requests.empty() && decoder.empty()) break;  // the input has ended
    if (!requests.empty()) decoder.add(requests);
    for (FinishedSentence& done : decoder.step()) {
      waiting.emplace(done.id, translator.to_result(done.hypotheses, source_tokens[done.id]));
      source_tokens.erase(done.id);
    }
    for (auto it = waiting.find(next_to_write); it != waiting.end();
         it = waiting.find(++next_to_write)) {
      write(it->second);
      ++totals.sentences;
      if (!it->second.hypotheses.empty()) {
        totals.target_tokens += static_cast<long>(it->second.hypotheses[0].ids.size());
      }
      waiting.erase(it);
    }
    progress.update(totals.sentences, input.total());
  }
  return totals;
}

}  // namespace rpt::tools
