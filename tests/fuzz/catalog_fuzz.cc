// libFuzzer target: arbitrary bytes as an XLIFF file (first byte odd), a JSON resource file
// (bit 1 set) or a PO catalogue (else) through Catalog: parse (a CatalogError is fine), render
// the texts themselves, then mangled translations (empty, doubled, quotes and backslashes, stray
// markup, an escape at the end). Must never crash or hang; a rendered file parses again with no
// more to translate than the texts that rendered empty (JSON: with the translations as its
// texts); libgettextpo's error path (its handler throws on a fatal error)
// runs on every malformed input.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "documents/catalog.h"

namespace {

using rpt::documents::Catalog;
using rpt::documents::CatalogError;
using rpt::documents::CatalogOptions;
using rpt::documents::TextFormat;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "catalog: %s\n", what);
  __builtin_trap();
}

std::string mangle(const std::string& text, std::uint8_t how) {
  switch (how % 6) {
    case 0:
      return "";
    case 1:
      return text + text;
    case 2:
      return "\"" + text + "\\\"\n\t\\";
    case 3:
      return "<g id=\"1\">" + text + "</g><x/>&amp;";
    case 4:
      return text + "\\";
    default:
      return text;
  }
}

// Renders `translations` and parses the file again: the entries rendered non-empty are done.
void render_and_reparse(const Catalog& catalog, TextFormat format, const CatalogOptions& options,
                        const std::vector<std::string>& translations) {
  std::string rendered;
  try {
    rendered = catalog.render(translations);
  } catch (const CatalogError&) {
    return;  // the writer refused (reported, not a crash)
  }
  std::unique_ptr<Catalog> again;
  try {
    again = Catalog::parse(rendered, format, options);
  } catch (const CatalogError& error) {
    std::fprintf(stderr, "%s\n", error.what());
    fail("a rendered file does not parse");
  }
  if (format == TextFormat::kJson) {
    std::vector<std::string> texts;
    for (const auto& text : again->texts()) texts.push_back(text.text);
    if (texts != translations) fail("a rendered JSON file does not hold the translations");
    return;
  }
  int empty = 0;
  for (const std::string& translation : translations) empty += translation.empty() ? 1 : 0;
  if (again->stats().to_translate > empty) fail("a rendered file still needs translations");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const TextFormat format = (data[0] & 1) != 0   ? TextFormat::kXliff
                            : (data[0] & 2) != 0 ? TextFormat::kJson
                                                 : TextFormat::kPo;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  CatalogOptions options;
  options.target_language = "de";
  options.max_entries = 2000;
  std::unique_ptr<Catalog> catalog;
  try {
    catalog = Catalog::parse(bytes, format, options);
  } catch (const CatalogError&) {
    return 0;
  }
  std::vector<std::string> identity;
  std::vector<std::string> mangled;
  for (std::size_t i = 0; i < catalog->texts().size(); ++i) {
    identity.push_back(catalog->texts()[i].text);
    mangled.push_back(mangle(catalog->texts()[i].text, data[i % size]));
  }
  render_and_reparse(*catalog, format, options, identity);
  render_and_reparse(*catalog, format, options, mangled);
  return 0;
}
