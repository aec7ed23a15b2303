// Internal to xliff_catalog.cc: the order of XLIFF's paired inline codes that are not one
// element (1.2 <bx/>..<ex/>, <bpt>..<ept>, Angular's <x id="START_LINK"/>..<x id="CLOSE_LINK"/>;
// 2.0 <sc/>..<ec/>, <sm/>..<em/>). The model moves such codes as it moves any placeholder, and
// may put an end before its start, which XLIFF forbids and a tool that renders the target turns
// into broken markup (</a> ... <a href>).
#pragma once

#include <libxml/tree.h>

#include <set>
#include <string>
#include <string_view>

namespace rpt::documents::xliff {

// The pairs (by kind and link id) of the inline codes from `first` on, in document order and
// inside the elements that enclose text (<g>, <pc>, <mrk>), one of whose ends comes before its
// start: the end's count passes the start's somewhere. `ns`: the XLIFF namespace; `version12`:
// 1.2's codes, else 2.0's.
std::set<std::string> misordered_pairs(const xmlNode* first, std::string_view ns, bool version12);

}  // namespace rpt::documents::xliff
