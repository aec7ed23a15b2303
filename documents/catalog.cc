#include "documents/catalog.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "documents/json_catalog.h"
#include "documents/po_catalog.h"
#include "documents/xliff_catalog.h"

namespace rpt::documents {

bool same_primary_language(std::string_view a, std::string_view b) {
  a = a.substr(0, a.find_first_of("_-@."));
  b = b.substr(0, b.find_first_of("_-@."));
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) ==
           std::tolower(static_cast<unsigned char>(y));
  });
}

std::unique_ptr<Catalog> Catalog::parse(std::string_view bytes, TextFormat format,
                                        const CatalogOptions& options) {
  if (!is_catalog_format(format)) {
    throw std::invalid_argument(std::string("not a localization file format: ") +
                                text_format_name(format));
  }
  if (options.target_language.empty()) throw CatalogError("no target language given");
  if (bytes.size() > options.max_bytes) {
    throw CatalogError("file of " + std::to_string(bytes.size()) + " bytes exceeds the limit of " +
                       std::to_string(options.max_bytes));
  }
  switch (format) {
    case TextFormat::kPo:
      return parse_po_catalog(bytes, options);
    case TextFormat::kJson:
      return parse_json_catalog(bytes, options);
    default:
      return parse_xliff_catalog(bytes, options);
  }
}

}  // namespace rpt::documents
