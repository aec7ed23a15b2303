#include "engine/batch_decoder.h"

#include <algorithm>
#include <unordered_set>

#include "kernels/errors.h"

namespace rpt {

int admission_group_for(Device device, int requested, int max_rows) {
  constexpr int kGpuGroup = 8, kCpuGroup = 1;
  const int group = requested != kAdmissionGroupByDevice
                        ? requested
                        : std::min(device == Device::kCuda ? kGpuGroup : kCpuGroup, max_rows);
  RPT_CHECK(group >= 1 && group <= max_rows, InvalidArgument, "admission_group must be in [1, ",
            max_rows, "] (the sentences decoded together), got ", group);
  return group;
}

std::size_t sentences_to_admit(std::size_t room, std::size_t waiting, bool decoder_empty,
                               int group) {
  const std::size_t count = std::min(room, waiting);
  if (decoder_empty || count == waiting || count >= static_cast<std::size_t>(group)) {
    return count;
  }
  return 0;
}

BatchDecoder::BatchDecoder(std::shared_ptr<const Engine> engine)
    : engine_(std::move(engine)), backend_(engine_->make_backend()) {}

BatchDecoder::BatchDecoder(std::shared_ptr<const Engine> engine,
                           std::unique_ptr<DecoderBackend> backend)
    : engine_(std::move(engine)), backend_(std::move(backend)) {
  if (!backend_) backend_ = engine_->make_backend();
}

std::unique_ptr<DecoderBackend> BatchDecoder::release_backend() {
  if (!sentences_.empty()) return nullptr;
  fresh_ = true;
  return std::move(backend_);
}

void BatchDecoder::reset() {
  sentences_.clear();  // before the backend whose memory they hold
  backend_.reset();    // the next add() makes a fresh one
  fresh_ = true;
}

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
    RPT_CHECK(request.options.beam_size <= model().target_vocabulary().size(), InvalidArgument,
              "beam_size ", request.options.beam_size, " exceeds the target vocabulary size ",
              model().target_vocabulary().size());
    RPT_CHECK(ids.insert(request.id).second, InvalidArgument, "sentence id ", request.id,
              " is already active");
    sources.push_back(request.source_ids);
  }
  if (!backend_) backend_ = engine_->make_backend();
  sentences_.reserve(sentences_.size() + requests.size());  // all of them join, or none
  fresh_ = false;
  std::vector<EncodedSentence> encoded = backend_->encode(sources);
  for (std::size_t i = 0; i < requests.size(); ++i) {
    sentences_.push_back({.id = requests[i].id,
                          .search = BeamSearch(requests[i].options, model().decoder_start_id(),
                                               model().eos_id(), requests[i].constraints),
                          .memory = std::move(encoded[i]),
                          .parents = {-1}});
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
  StepInput& input = input_;
  input.tokens.clear();
  input.positions.clear();
  input.parents.clear();
  input.blocked_tokens.clear();
  input.groups.clear();
  input.width = 1;
  input.max_positions = 0;
  for (ActiveSentence& sentence : sentences_) {
    input.max_positions = std::max(input.max_positions, sentence.search.options().max_length);
    const int alive = sentence.search.alive();
    input.groups.push_back({.sentence = &sentence.memory,
                            .first_row = static_cast<int>(input.tokens.size()),
                            .rows = alive});
    // One fused scan of the vocabulary per row: its best `width` candidates.
    input.width = std::max(input.width, sentence.search.candidates_per_beam());
    const int blocked = sentence.search.eos_blocked() ? model().eos_id() : -1;
    for (int beam = 0; beam < alive; ++beam) {
      input.tokens.push_back(sentence.search.last_token(beam));
      input.positions.push_back(sentence.search.generated());
      input.parents.push_back(sentence.parents[static_cast<std::size_t>(beam)]);
      input.blocked_tokens.push_back(blocked);
    }
  }
  input.width = std::min(input.width, model().target_vocabulary().size());
  backend_->step(input, candidates_);
  const int width = input.width;

  std::vector<FinishedSentence> finished;
  std::vector<ActiveSentence> remaining;
  for (std::size_t s = 0; s < sentences_.size(); ++s) {
    ActiveSentence& sentence = sentences_[s];
    const long first_row = input.groups[s].first_row;
    const std::vector<int> local =
        sentence.search.advance(candidates_.log_probs.data() + first_row * width,
                                candidates_.ids.data() + first_row * width, width);
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
