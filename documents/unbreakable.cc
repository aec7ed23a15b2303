#include "documents/unbreakable.h"

#include "spans/protected_spans.h"

namespace rpt::documents {

Unbreakable::Unbreakable(std::string_view content, bool tag_pairs)
    : blocked_(content.size() + 1, false) {
  std::vector<int> opened(content.size() + 2, 0);  // +1 at a range's first inner position
  const std::vector<ProtectedSpan> spans = find_protected_spans(content);
  for (std::size_t i = 0; i < spans.size(); ++i) {
    const ProtectedSpan& span = spans[i];
    std::size_t end = span.end;
    if (tag_pairs && span.kind == SpanKind::kTag && span.partner > static_cast<int>(i)) {
      end = spans[static_cast<std::size_t>(span.partner)].end;
    }
    if (end > span.begin + 1) {
      ++opened[span.begin + 1];
      --opened[end];
    }
  }
  int depth = 0;
  for (std::size_t at = 0; at < blocked_.size(); ++at) {
    depth += opened[at];
    blocked_[at] = depth > 0;
  }
}

}  // namespace rpt::documents
