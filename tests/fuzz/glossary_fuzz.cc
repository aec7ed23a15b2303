// libFuzzer target: arbitrary bytes as a glossary and a text. The first line is the text, each
// further line "source<TAB>target" an entry; the entries are checked (a refusal is fine), and
// the matches found in the text must keep their invariants: in order, not overlapping each
// other or a protected span, inside the text, on UTF-8 character boundaries, each one a whole
// entry's source. Must never crash.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "engine/glossary.h"
#include "common/text_hygiene.h"
#include "kernels/errors.h"

namespace {

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "glossary: %s\n", what);
  __builtin_trap();
}

bool char_boundary(std::string_view text, std::size_t at) {
  return at == text.size() || (static_cast<unsigned char>(text[at]) & 0xC0) != 0x80;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t first_line = input.find('\n');
  const std::string text(input.substr(0, first_line));
  std::vector<rpt::GlossaryEntry> entries;
  for (std::size_t at = first_line; at != std::string_view::npos && at < input.size();) {
    const std::size_t end = input.find('\n', at + 1);
    const std::string_view line =
        input.substr(at + 1, end == std::string_view::npos ? std::string_view::npos : end - at - 1);
    const std::size_t tab = line.find('\t');
    if (tab != std::string_view::npos) {
      entries.push_back({std::string(line.substr(0, tab)), std::string(line.substr(tab + 1))});
    }
    at = end;
  }
  if (!rpt::is_valid_utf8(text)) return 0;  // callers check texts first
  try {
    const rpt::Glossary glossary(std::move(entries), rpt::GlossaryLimits::kEntriesPerCall);
    const rpt::GlossaryUse use{{&glossary}, rpt::GlossaryMethod::kPhrase};
    for (const bool spans_on : {true, false}) {
      const auto spans =
          spans_on ? rpt::find_protected_spans(text) : std::vector<rpt::ProtectedSpan>{};
      std::size_t previous_end = 0;
      for (const rpt::GlossaryMatch& m : rpt::match_glossary(text, use, spans)) {
        if (m.begin < previous_end || m.end <= m.begin || m.end > text.size()) {
          fail("matches out of order, empty or past the text");
        }
        if (!char_boundary(text, m.begin) || !char_boundary(text, m.end)) {
          fail("a match splits a character");
        }
        for (const rpt::ProtectedSpan& span : spans) {
          if (m.begin < span.end && span.begin < m.end) fail("a match overlaps a span");
        }
        if (m.glossary != 0 || m.entry < 0 || m.entry >= glossary.size()) fail("bad entry");
        previous_end = m.end;
      }
      rpt::count_term(text, rpt::capitalize_first(text.substr(0, 8)), true);
    }
  } catch (const rpt::InvalidArgument&) {
    // A refused glossary: what the server answers with INVALID_ARGUMENT.
  }
  return 0;
}
