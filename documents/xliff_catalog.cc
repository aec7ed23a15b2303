#include "documents/xliff_catalog.h"

namespace rpt::documents {

std::unique_ptr<Catalog> parse_xliff_catalog(std::string_view, const CatalogOptions&) {
  throw CatalogError("XLIFF: not built yet");
}

}  // namespace rpt::documents
