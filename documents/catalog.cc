#include "documents/catalog.h"

#include <string>

#include "documents/po_catalog.h"
#include "documents/xliff_catalog.h"

namespace rpt::documents {

CatalogFormat parse_catalog_format(std::string_view name) {
  if (name == "po" || name == "pot") return CatalogFormat::kPo;
  if (name == "xliff" || name == "xlf") return CatalogFormat::kXliff;
  throw std::invalid_argument("unknown file format '" + std::string(name) +
                              "': choose po (pot) or xliff (xlf)");
}

const char* catalog_format_name(CatalogFormat format) {
  return format == CatalogFormat::kPo ? "po" : "xliff";
}

std::unique_ptr<Catalog> Catalog::parse(std::string_view bytes, CatalogFormat format,
                                        const CatalogOptions& options) {
  if (options.target_language.empty()) throw CatalogError("no target language given");
  if (bytes.size() > options.max_bytes) {
    throw CatalogError("file of " + std::to_string(bytes.size()) + " bytes exceeds the limit of " +
                       std::to_string(options.max_bytes));
  }
  return format == CatalogFormat::kPo ? parse_po_catalog(bytes, options)
                                      : parse_xliff_catalog(bytes, options);
}

}  // namespace rpt::documents
