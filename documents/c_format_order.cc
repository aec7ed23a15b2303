#include "documents/c_format_order.h"

#include <algorithm>
#include <vector>

#include "spans/protected_spans.h"

namespace rpt::documents {
namespace {

struct Directive {
  std::size_t begin = 0;
  std::size_t end = 0;
  std::string_view text;
};

// The argument-taking directives (%s, %lu, %.2f; not %%), or false when one cannot be numbered
// simply: already positional, a `*` width or precision, a system-dependent <PRIu64>.
bool directives_of(std::string_view text, std::vector<Directive>* out) {
  for (const ProtectedSpan& span : find_argument_spans(text, {.accelerators = false})) {
    if (span.kind != SpanKind::kPrintf) continue;
    const std::string_view directive = text.substr(span.begin, span.end - span.begin);
    if (directive.find_first_of("$*<") != std::string_view::npos) return false;
    out->push_back({span.begin, span.end, directive});
  }
  return true;
}

}  // namespace

std::string c_directives_in_source_order(std::string_view source, std::string_view translation) {
  std::vector<Directive> from;
  std::vector<Directive> to;
  if (!directives_of(source, &from) || !directives_of(translation, &to) ||
      from.size() != to.size()) {
    return std::string(translation);
  }
  bool in_order = true;
  for (std::size_t i = 0; i < to.size(); ++i) in_order = in_order && to[i].text == from[i].text;
  if (in_order) return std::string(translation);
  // Each translated directive is the first unused source directive written the same.
  std::vector<bool> used(from.size(), false);
  std::vector<std::size_t> position(to.size());
  for (std::size_t i = 0; i < to.size(); ++i) {
    std::size_t j = 0;
    while (j < from.size() && (used[j] || from[j].text != to[i].text)) ++j;
    if (j == from.size()) return std::string(translation);  // not the same directives
    used[j] = true;
    position[i] = j + 1;
  }
  std::string out;
  std::size_t copied = 0;
  for (std::size_t i = 0; i < to.size(); ++i) {
    out.append(translation.substr(copied, to[i].begin - copied));
    out += '%' + std::to_string(position[i]) + '$';
    out.append(to[i].text.substr(1));
    copied = to[i].end;
  }
  out.append(translation.substr(copied));
  return out;
}

}  // namespace rpt::documents
