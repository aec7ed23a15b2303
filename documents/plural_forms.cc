#include "documents/plural_forms.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

namespace rpt::documents {
namespace {

// The common rules, named by the languages that use them (gettext manual, "Plural forms").
constexpr PluralRule kOneForm{1, "0", 0, false};
constexpr PluralRule kNotOne{2, "(n != 1)", 0, true};
constexpr PluralRule kOverOne{2, "(n > 1)", 0, false};
constexpr PluralRule kEastSlavic{
    3, "(n%10==1 && n%100!=11 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2)", 0,
    false};
constexpr PluralRule kPolish{
    3, "(n==1 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2)", 0, true};
constexpr PluralRule kCzech{3, "(n==1) ? 0 : (n>=2 && n<=4) ? 1 : 2", 0, true};
constexpr PluralRule kLithuanian{
    3, "(n%10==1 && n%100!=11 ? 0 : n%10>=2 && (n%100<10 || n%100>=20) ? 1 : 2)", 0, false};
constexpr PluralRule kLatvian{3, "(n%10==1 && n%100!=11 ? 0 : n != 0 ? 1 : 2)", 0, false};
constexpr PluralRule kRomanian{3, "n==1 ? 0 : (n==0 || (n%100 > 0 && n%100 < 20)) ? 1 : 2", 0,
                               true};
constexpr PluralRule kSlovenian{4, "(n%100==1 ? 0 : n%100==2 ? 1 : n%100==3 || n%100==4 ? 2 : 3)",
                                0, false};
constexpr PluralRule kIrish{3, "n==1 ? 0 : n==2 ? 1 : 2", 0, true};

constexpr std::array<std::pair<std::string_view, const PluralRule*>, 37> kLanguages{{
    {"be", &kEastSlavic}, {"bg", &kNotOne},     {"cs", &kCzech},      {"da", &kNotOne},
    {"de", &kNotOne},     {"el", &kNotOne},     {"en", &kNotOne},     {"eo", &kNotOne},
    {"es", &kNotOne},     {"et", &kNotOne},     {"fi", &kNotOne},     {"fo", &kNotOne},
    {"fr", &kOverOne},    {"ga", &kIrish},      {"he", &kNotOne},     {"hr", &kEastSlavic},
    {"hu", &kNotOne},     {"it", &kNotOne},     {"ja", &kOneForm},    {"ko", &kOneForm},
    {"lt", &kLithuanian}, {"lv", &kLatvian},    {"nb", &kNotOne},     {"nl", &kNotOne},
    {"nn", &kNotOne},     {"no", &kNotOne},     {"pl", &kPolish},     {"pt", &kNotOne},
    {"pt_BR", &kOverOne}, {"ro", &kRomanian},   {"ru", &kEastSlavic}, {"sk", &kCzech},
    {"sl", &kSlovenian},  {"sr", &kEastSlavic}, {"sv", &kNotOne},     {"tr", &kNotOne},
    {"uk", &kEastSlavic},
}};

const PluralRule* find_language(std::string_view tag) {
  for (const auto& [language, rule] : kLanguages) {
    if (language == tag) return rule;
  }
  return nullptr;
}

std::string without_blanks(std::string_view text) {
  std::string kept;
  for (char c : text) {
    if (!std::isspace(static_cast<unsigned char>(c))) kept += c;
  }
  return kept;
}

}  // namespace

const PluralRule* plural_rule_for(std::string_view language) {
  std::string tag(language.substr(0, language.find_first_of("@.")));
  std::replace(tag.begin(), tag.end(), '-', '_');
  if (const PluralRule* rule = find_language(tag)) return rule;
  if (tag == "zh" || tag.rfind("zh_", 0) == 0 || tag == "vi") return &kOneForm;
  return find_language(std::string_view(tag).substr(0, tag.find('_')));
}

const PluralRule* plural_rule_matching(int nplurals, std::string_view expression) {
  const std::string wanted = without_blanks(expression);
  for (const PluralRule* rule : {&kOneForm, &kNotOne, &kOverOne, &kEastSlavic, &kPolish, &kCzech,
                                 &kLithuanian, &kLatvian, &kRomanian, &kSlovenian, &kIrish}) {
    if (rule->nplurals != nplurals) continue;
    const std::string known = without_blanks(rule->expression);
    // A header may or may not wrap the expression in parentheses.
    if (wanted == known || wanted == "(" + known + ")" || "(" + wanted + ")" == known) return rule;
  }
  return nullptr;
}

std::string plural_forms_header(const PluralRule& rule) {
  return "nplurals=" + std::to_string(rule.nplurals) + "; plural=" + rule.expression + ";";
}

}  // namespace rpt::documents
