// XLIFF files as a Catalog (catalog.h).
#pragma once

#include <memory>
#include <string_view>

#include "documents/catalog.h"

namespace rpt::documents {

// Throws CatalogError.
std::unique_ptr<Catalog> parse_xliff_catalog(std::string_view bytes, const CatalogOptions& options);

}  // namespace rpt::documents
