// Texts the server counts as blank (empty, or only whitespace and control characters) and
// returns unchanged, with nothing to translate: the clients do not send them. The definition is the
// server's (common/text_hygiene.h).
#pragma once

#include <string>

#include "common/text_hygiene.h"

namespace rpt::client {

inline bool is_blank(const std::string& text) { return rpt::is_blank_text(text); }

}  // namespace rpt::client
