// libFuzzer target: arbitrary bytes as an HTML (first byte even) or XML (odd) document through
// MarkupDocument: parse (a MarkupError is fine), render the units themselves, then a mangled
// translation of each unit (tags dropped, added, swapped, text reversed, stray '<' and '&').
// Must never crash; the identity render keeps every unit; and an XML render, however mangled
// the translations, is well-formed XML with as many units: a bad translation never corrupts the
// tree. Most inputs are fragments (markup_document.h): a fragment's identity render is a
// fragment again (XML: with the same units), and its blank edges come back as they came.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "documents/markup_document.h"

namespace {

using rpt::documents::MarkupDocument;
using rpt::documents::MarkupError;
using rpt::documents::MarkupKind;
using rpt::documents::MarkupOptions;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "markup document: %s\n", what);
  __builtin_trap();
}

bool is_blank(char c, MarkupKind kind) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' ||
         (kind == MarkupKind::kHtml && c == '\f');
}

// A fragment's blank edges: a byte order mark and whitespace before, whitespace after.
std::pair<std::string_view, std::string_view> blank_edges(std::string_view source,
                                                          MarkupKind kind) {
  std::size_t begin = source.starts_with("\xEF\xBB\xBF") ? 3 : 0;
  while (begin < source.size() && is_blank(source[begin], kind)) ++begin;
  std::size_t end = source.size();
  while (end > begin && is_blank(source[end - 1], kind)) --end;
  return {source.substr(0, begin), source.substr(end)};
}

void check_fragment(const MarkupDocument& document, std::string_view source,
                    const std::string& identity, const MarkupOptions& options) {
  const auto [leading, trailing] = blank_edges(source, options.kind);
  if (!std::string_view(identity).starts_with(leading) ||
      !std::string_view(identity).ends_with(trailing)) {
    fail("a fragment's edges did not come back byte for byte");
  }
  const MarkupDocument again = MarkupDocument::parse(identity, options);
  if (!again.is_fragment()) fail("a fragment's render is no fragment");
  // XML parses back to the same units. HTML is repaired in ways libxml2 does not read back the
  // same (a control character or form feed in an attribute value, an element named ":::").
  if (options.kind == MarkupKind::kXml && again.units() != document.units()) {
    fail("an XML fragment's render has other units");
  }
}

std::string mangle(const std::string& unit, std::uint8_t how) {
  std::string out = unit;
  const std::size_t tag = unit.find('<');
  const std::size_t tag_end = tag == std::string::npos ? tag : unit.find('>', tag);
  switch (how % 8) {
    case 0:  // drop the first tag
      if (tag_end != std::string::npos) out.erase(tag, tag_end + 1 - tag);
      break;
    case 1:  // the first tag twice
      if (tag_end != std::string::npos) out += unit.substr(tag, tag_end + 1 - tag);
      break;
    case 2:  // reversed: closing tags before opening ones
      std::reverse(out.begin(), out.end());
      break;
    case 3:
      out = "a < b & c <b>" + out;
      break;
    case 4:  // move the first tag to the end
      if (tag_end != std::string::npos) {
        out.erase(tag, tag_end + 1 - tag);
        out += unit.substr(tag, tag_end + 1 - tag);
      }
      break;
    case 5:
      out += "&#0; &#x110000; &bogus; &amp \x01";
      break;
    case 6:
      out = "";
      break;
    default:
      std::transform(out.begin(), out.end(), out.begin(), [](char c) {
        return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c;
      });
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  MarkupOptions options;
  options.kind = (data[0] & 1) != 0 ? MarkupKind::kXml : MarkupKind::kHtml;
  const std::string_view source(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    const MarkupDocument document = MarkupDocument::parse(source, options);
    const MarkupDocument::Rendered identity = document.render(document.units());
    if (identity.units_kept_as_source != 0) fail("the identity render kept a unit as source");
    if (document.is_fragment()) check_fragment(document, source, identity.text, options);
    std::vector<std::string> mangled;
    for (std::size_t i = 0; i < document.units().size(); ++i) {
      mangled.push_back(mangle(document.units()[i], data[i % size]));
    }
    const MarkupDocument::Rendered rendered = document.render(mangled);
    if (options.kind == MarkupKind::kXml) {
      try {
        MarkupDocument::parse(identity.text, options);
        MarkupDocument::parse(rendered.text, options);
      } catch (const MarkupError& error) {
        std::fprintf(stderr, "%s\n", error.what());
        fail("an XML render is not well-formed");
      }
    } else {
      MarkupDocument::parse(rendered.text, options);
    }
  } catch (const MarkupError&) {
  }
  return 0;
}
