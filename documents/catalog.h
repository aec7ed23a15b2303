// Localization files translated in place (docs/localization.md): gettext PO/POT (po_catalog.cc,
// libgettextpo), XLIFF 1.2/2.0 (xliff_catalog.cc, libxml2) and JSON resources (json_catalog.cc,
// nlohmann-json). parse() lists the texts that need a translation (untranslated PO msgid and
// msgid_plural, fuzzy ones when asked; XLIFF sources with no target; every JSON text), each plain
// text or an XML fragment; render() writes the file back with them filled
// in and marked for review, everything else as it was (as gettext's or libxml2's writer prints
// it). A Catalog is a value: const calls may run concurrently (PO parsing and writing are
// serialized inside: libgettextpo keeps its error handler in globals).
#pragma once

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "documents/text_format.h"

namespace rpt::documents {

struct CatalogOptions {
  // The target language (BCP 47 or POSIX, "de", "pt_BR"): PO header Language and Plural-Forms,
  // XLIFF target-language/trgLang when the file names none. Required.
  std::string target_language;
  bool translate_fuzzy = false;  // PO: retranslate fuzzy entries too (their msgstr replaced)
  // Mark machine translations for review: PO `#, fuzzy`; XLIFF 1.2 state="needs-review-
  // translation", 2.0 state="initial". False: PO unmarked, XLIFF "translated".
  bool mark_for_review = true;
  std::size_t max_bytes = 16 << 20;  // a larger file: CatalogError
  std::size_t max_entries = 200000;  // more texts to translate: CatalogError
};

// A file that cannot be read as its format (the parser's first errors, with their lines), a
// limit exceeded, a target language with no known plural rule for a catalogue with plurals.
class CatalogError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One text to translate.
struct CatalogText {
  std::string text;
  TextFormat format = TextFormat::kText;  // kText or kXml (an XLIFF source with inline elements)
};

struct CatalogStats {
  int entries = 0;       // translatable entries/units in the file (header, obsolete apart)
  int to_translate = 0;  // entries whose texts texts() lists
  int already_translated = 0;
  int not_translatable = 0;  // XLIFF translate="no"
  int plural_entries = 0;    // PO entries with msgid_plural among to_translate
};

// Whether two language names (BCP 47 or POSIX: "de", "de-AT", "de_DE.UTF-8") share their
// primary language, ASCII case aside. A file that names another target than the translation's
// is refused (PO Language, XLIFF target-language and trgLang).
bool same_primary_language(std::string_view a, std::string_view b);

class Catalog {
 public:
  virtual ~Catalog() = default;

  // `format`: kPo, kXliff or kJson (std::invalid_argument otherwise). Throws CatalogError.
  static std::unique_ptr<Catalog> parse(std::string_view bytes, TextFormat format,
                                        const CatalogOptions& options);

  virtual const std::vector<CatalogText>& texts() const = 0;
  virtual const CatalogStats& stats() const = 0;
  // The file with translations[i] as the translation of texts()[i]; std::invalid_argument when
  // the counts differ, CatalogError when the writer fails.
  virtual std::string render(const std::vector<std::string>& translations) const = 0;
};

}  // namespace rpt::documents
