#include "server/text_assembly.h"

#include "engine/text_segments.h"

namespace rpt::server {

TextAssembly::TextAssembly(JobObserver* call, const PreparedRequest& prepared,
                           TranslationCache* cache)
    : call_(call), cache_(cache), owner_(prepared.segment_owner), n_best_(prepared.options.n_best) {
  documents_.reserve(prepared.texts.size());
  for (const PreparedText& text : prepared.texts) {
    documents_.push_back(text.document);
    first_segment_.push_back(text.first_segment);
    results_.emplace_back(static_cast<std::size_t>(text.segments()));
    missing_.push_back(text.segments());
  }
}

void TextAssembly::on_sentence(int index, TranslationResult result) {
  const auto i = static_cast<std::size_t>(index);
  if (cache_ != nullptr) cache_->insert(keys[i], result);
  std::lock_guard lock(mutex_);
  add_segment(segment_index[i], std::move(result));
}

void TextAssembly::on_finish(const RequestStatus& status) {
  JobObserver* call = call_;
  RequestStatus outcome = status;
  {
    std::lock_guard lock(mutex_);
    if (!known_delivered_) {
      held_status_ = status;
      return;
    }
    if (outcome.ok() && failure_) outcome = *failure_;
  }
  call->on_finish(outcome);  // may delete the call, and this with it
}

void TextAssembly::deliver_known() {
  JobObserver* call = call_;
  std::optional<RequestStatus> finished;
  {
    std::lock_guard lock(mutex_);
    for (std::size_t text = 0; text < documents_.size(); ++text) {
      if (documents_[text]->segments() == 0) deliver_text(text);  // nothing to decode
    }
    for (auto& [segment, result] : known) add_segment(segment, std::move(result));
    known.clear();
    known_delivered_ = true;
    finished = held_status_;
    if (finished && finished->ok() && failure_) finished = *failure_;
  }
  if (finished) call->on_finish(*finished);  // may delete the call, and this with it
}

void TextAssembly::add_segment(int segment, TranslationResult result) {
  const auto text = static_cast<std::size_t>(owner_[static_cast<std::size_t>(segment)]);
  results_[text][static_cast<std::size_t>(segment - first_segment_[text])] = std::move(result);
  if (--missing_[text] == 0) deliver_text(text);
}

void TextAssembly::deliver_text(std::size_t text) {
  // Never throws: it runs after the job was queued (and on the scheduler's hand-over thread),
  // where an exception would leave the call answered and the job still pointing at it. A text
  // that cannot be put back fails the call when the job ends.
  try {
    TranslationResult joined = join_document(*documents_[text], std::move(results_[text]), n_best_);
    results_[text].clear();
    call_->on_sentence(static_cast<int>(text), std::move(joined));
  } catch (const std::exception& e) {
    if (!failure_) {
      failure_ = RequestStatus{StatusCode::kInternal,
                               "texts[" + std::to_string(text) +
                                   "] could not be put back together: " + client_message(e)};
    }
  }
}

}  // namespace rpt::server
