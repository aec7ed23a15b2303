// gettext plural rules (the PO header's Plural-Forms) of the languages rpt fills catalogues for
// (tests/documents/po_catalog_test.cc checks each against msginit's).
#pragma once

#include <string>
#include <string_view>

namespace rpt::documents {

struct PluralRule {
  int nplurals = 2;
  const char* expression = "(n != 1)";  // a C expression of n: the msgstr index
  int form_of_one = 0;                  // the msgstr index that n == 1 selects
  bool one_only = true;  // that form serves n == 1 alone (de's 0), not also 0 or 21 (fr, ru)
};

// No language has more than six plural forms; a header claiming more is refused.
inline constexpr int kMaxPluralForms = 16;

// The rule of a language ("de", "pt_BR", "pt-BR", "sr@latin": the full tag first, then the
// primary language); nullptr for a language the table does not know.
const PluralRule* plural_rule_for(std::string_view language);

// The table's rule with this expression and count (whitespace ignored), nullptr when none:
// what a header's own Plural-Forms means for choosing the singular's form.
const PluralRule* plural_rule_matching(int nplurals, std::string_view expression);

// The header value: "nplurals=2; plural=(n != 1);".
std::string plural_forms_header(const PluralRule& rule);

}  // namespace rpt::documents
