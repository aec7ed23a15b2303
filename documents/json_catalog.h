// JSON localization files as a Catalog (catalog.h), read and written by nlohmann-json: i18next,
// vue-i18n and ngx-translate resources (objects of strings, nested), FormatJS/react-intl
// messages ("defaultMessage"), Chrome and WebExtension messages.json ("message"), Flutter ARB
// ("@key" metadata, "@@locale"). docs/localization.md, "JSON".
#pragma once

#include <memory>
#include <string_view>

#include "documents/catalog.h"

namespace rpt::documents {

// Throws CatalogError.
std::unique_ptr<Catalog> parse_json_catalog(std::string_view bytes, const CatalogOptions& options);

}  // namespace rpt::documents
