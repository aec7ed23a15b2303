#include "server/fair_queue.h"

namespace rpt::server {

QueueAdmission judge_admission(const AdmissionInput& input) {
  const auto& [bounds, call, held, total, weight, other_weight] = input;
  QueueAdmission admission;
  admission.queued_weight = weight + other_weight;
  // Rounded down: the shares never add up to more than the bounds.
  admission.share = {bounds.sentences * weight / admission.queued_weight,
                     bounds.tokens * weight / admission.queued_weight};
  const bool within_share = held.sentences + call.sentences <= admission.share.sentences &&
                            held.tokens + call.tokens <= admission.share.tokens;
  if (!within_share) {
    admission.verdict = other_weight > 0 ? QueueVerdict::kOverShare : QueueVerdict::kFull;
    return admission;
  }
  // Alone, within its share is within the bounds. With others, the tenants that arrived at a full
  // queue may take it past them, up to this ceiling.
  const bool under_ceiling = total.sentences + call.sentences <= 2 * bounds.sentences &&
                             total.tokens + call.tokens <= 2 * bounds.tokens;
  if (!under_ceiling) admission.verdict = QueueVerdict::kFull;
  return admission;
}

}  // namespace rpt::server
