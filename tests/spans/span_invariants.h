// The invariants every result of find_protected_spans keeps, shared by protected_spans_test and
// the protected_spans fuzz target: in bounds, non-empty, sorted, non-overlapping, partners only
// between tags, symmetric, one opening and one closing.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "spans/protected_spans.h"

namespace rpt {

// "" when `spans` keeps them all, otherwise what is wrong.
inline std::string check_span_invariants(std::string_view text,
                                         const std::vector<ProtectedSpan>& spans) {
  const int n = static_cast<int>(spans.size());
  for (int i = 0; i < n; ++i) {
    const ProtectedSpan& s = spans[i];
    const std::string at = "span " + std::to_string(i) + ": ";
    if (!(s.begin < s.end && s.end <= text.size())) return at + "out of bounds or empty";
    if (i > 0 && spans[i - 1].end > s.begin) return at + "overlaps or is out of order";
    if (s.partner == -1) continue;
    if (s.partner < 0 || s.partner >= n || s.partner == i) return at + "partner out of range";
    const ProtectedSpan& p = spans[s.partner];
    if (s.kind != SpanKind::kTag || p.kind != SpanKind::kTag) return at + "partner of a non-tag";
    if (p.partner != i) return at + "partner not symmetric";
    if (s.closing == p.closing) return at + "pairs two opening or two closing tags";
    if (s.closing != (s.partner < i)) return at + "closing tag before its opening tag";
    // Tags in angle brackets say which they are, and a Markdown link's "](" closes; Markdown's
    // emphasis markers open and close alike.
    const bool markdown = text[s.begin] == '*' || text[s.begin] == '_';
    const std::string_view head = text.substr(s.begin, 2);
    const bool link = head == "](" || head == "][" || head.starts_with("[") || head == "![";
    if (link && s.closing != (head == "](" || head == "][")) {
      return at + "link delimiter unlike its side";
    }
    if (!markdown && !link && s.closing != (head == "</")) {
      return at + "closing flag unlike the tag's </";
    }
    if (markdown &&
        text.substr(s.begin, s.end - s.begin) != text.substr(p.begin, p.end - p.begin)) {
      return at + "emphasis markers unlike their partner's";
    }
  }
  return "";
}

}  // namespace rpt
