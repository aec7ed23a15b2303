#include "engine/batch_decoder.h"

#include <algorithm>
#include <unordered_set>

#include "engine/encoder.h"
#include "kernels/errors.h"
#include "kernels/top_k_log_softmax.h"

namespace rpt {

BatchDecoder::BatchDecoder(std::shared_ptr<const Model> model)
    : model_(std::move(model)), state_(*model_) {}

int BatchDecoder::active_rows() const {
  int rows = 0;
  for (const ActiveSentence& sentence : sentences_) rows += sentence.search.alive();
  return rows;
}

void BatchDecoder::add(const std::vector<SentenceRequest>& requests) {
  if (requests.empty()) return;
  std::unordered_set<std::uint64_t> ids;
  for (const ActiveSentence& sentence : sentences_) ids.insert(sentence.id);
  std::vector<std::vector<int>> sources;
  for (const SentenceRequest& request : requests) {
    validate(request.options);
    RPT_CHECK(request.options.beam_size <= model_->target_vocabulary().size(), InvalidArgument,
              "beam_size ", request.options.beam_size, " exceeds the target vocabulary size ",
              model_->target_vocabulary().size());
    RPT_CHECK(ids.insert(request.id).second, InvalidArgument, "sentence id ", request.id,
              " is already active");
    sources.push_back(request.source_ids);
  }
  const EncodedBatch encoded = encode(*model_, sources);
  const int stride = static_cast<int>(encoded.memory_keys_values.dim(2));
  const Tensor memory = encoded.memory_keys_values.reshape(
      {static_cast<std::int64_t>(encoded.batch) * encoded.length, stride});
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const int first = static_cast<int>(i) * encoded.length;
    ActiveSentence sentence{
        .id = requests[i].id,
        .search = BeamSearch(requests[i].options, model_->decoder_start_id(), model_->eos_id()),
        .memory = memory.slice_rows(first, first + encoded.lengths[i]),
        .memory_length = encoded.lengths[i],
        .parents = {-1}};
    sentences_.push_back(std::move(sentence));
  }
}

bool BatchDecoder::cancel(std::uint64_t id) {
  auto found = std::find_if(sentences_.begin(), sentences_.end(),
                            [id](const ActiveSentence& s) { return s.id == id; });
  if (found == sentences_.end()) return false;
  sentences_.erase(found);
  return true;
}

std::vector<FinishedSentence> BatchDecoder::step() {
  if (sentences_.empty()) return {};
  // Lay the rows out sentence by sentence, carrying each row's cache from its parent.
  DecoderStepInput input;
  std::vector<int> parents;
  std::vector<int> cached_lengths;
  for (ActiveSentence& sentence : sentences_) {
    MemoryGroup group;
    group.keys_values = sentence.memory.data<float>();
    group.row_stride = static_cast<int>(sentence.memory.dim(1));
    group.memory_length = sentence.memory_length;
    group.first_row = static_cast<int>(input.tokens.size());
    group.rows = sentence.search.alive();
    input.memory.push_back(group);
    for (int beam = 0; beam < sentence.search.alive(); ++beam) {
      input.tokens.push_back(sentence.search.last_token(beam));
      input.positions.push_back(sentence.search.generated());
      parents.push_back(sentence.parents[static_cast<std::size_t>(beam)]);
      cached_lengths.push_back(sentence.search.generated());
    }
  }
  state_.reorder(parents, cached_lengths);

  const Tensor logits = decoder_step(*model_, input, state_);
  const int vocab = static_cast<int>(logits.dim(1));

  // One fused scan of the vocabulary for every row: its best `width` log-probs.
  int width = 1;
  std::vector<int> blocked;
  for (const ActiveSentence& sentence : sentences_) {
    width = std::max(width, sentence.search.options().beam_size);
    const int eos = sentence.search.eos_blocked() ? model_->eos_id() : -1;
    blocked.insert(blocked.end(), static_cast<std::size_t>(sentence.search.alive()), eos);
  }
  const int rows = static_cast<int>(input.tokens.size());
  std::vector<float> log_probs(static_cast<std::size_t>(rows) * width);
  std::vector<int> ids(log_probs.size());
  kernels::top_k_log_softmax_cpu({.logits = logits.data<float>(),
                                  .rows = rows,
                                  .vocab = vocab,
                                  .k = width,
                                  .blocked_token = blocked.data(),
                                  .log_probs = log_probs.data(),
                                  .ids = ids.data()});

  std::vector<FinishedSentence> finished;
  std::vector<ActiveSentence> remaining;
  for (std::size_t s = 0; s < sentences_.size(); ++s) {
    ActiveSentence& sentence = sentences_[s];
    const long first_row = input.memory[s].first_row;
    const std::vector<int> local = sentence.search.advance(
        log_probs.data() + first_row * width, ids.data() + first_row * width, width);
    if (sentence.search.done()) {
      finished.push_back({sentence.id, sentence.search.results()});
      continue;
    }
    sentence.parents.clear();
    for (int parent : local) sentence.parents.push_back(static_cast<int>(first_row) + parent);
    remaining.push_back(std::move(sentence));
  }
  sentences_ = std::move(remaining);
  return finished;
}

}  // namespace rpt
