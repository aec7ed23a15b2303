#include "engine/language_pair.h"

#include <algorithm>
#include <cctype>

#include "kernels/errors.h"

namespace rpt {

std::string LanguagePair::name() const { return source + "->" + target; }

PairMatch match_pair(const LanguagePair& pair, const LanguageQuery& query) {
  if (!query.target.empty() && query.target != pair.target) return PairMatch::kNone;
  if (query.source.empty() || query.source == pair.source) return PairMatch::kSource;
  return pair.reads_any_source() ? PairMatch::kAnySource : PairMatch::kNone;
}

std::vector<std::size_t> matching_pairs(const std::vector<LanguagePair>& pairs,
                                        const LanguageQuery& query) {
  std::vector<std::size_t> best;
  PairMatch best_match = PairMatch::kNone;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const PairMatch match = match_pair(pairs[i], query);
    if (match == PairMatch::kNone || match < best_match) continue;
    if (match > best_match) best.clear();
    best_match = match;
    best.push_back(i);
  }
  return best;
}

namespace {

// `part` of the pairs at `indexes`, each once, joined with commas; past `most`, "... (N in all)".
std::string joined(const std::vector<LanguagePair>& pairs, const std::vector<std::size_t>& indexes,
                   std::string (*part)(const LanguagePair&), std::size_t most = 16) {
  std::vector<std::string> parts;
  for (const std::size_t i : indexes) {
    std::string each = part(pairs[i]);
    if (std::find(parts.begin(), parts.end(), each) == parts.end()) parts.push_back(each);
  }
  std::string list;
  for (std::size_t i = 0; i < parts.size() && i < most; ++i)
    list += (i == 0 ? "" : ", ") + parts[i];
  if (parts.size() > most) list += ", ... (" + std::to_string(parts.size()) + " in all)";
  return list;
}

std::string name_of(const LanguagePair& pair) { return pair.name(); }
std::string source_of(const LanguagePair& pair) { return pair.source; }
std::string target_of(const LanguagePair& pair) { return pair.target; }

}  // namespace

std::size_t pick_language_pair(const std::vector<LanguagePair>& pairs, const LanguageQuery& query) {
  const std::vector<std::size_t> found = matching_pairs(pairs, query);
  if (found.size() == 1) return found.front();
  std::vector<std::size_t> every(pairs.size());
  for (std::size_t i = 0; i < every.size(); ++i) every[i] = i;
  RPT_CHECK(!found.empty(), InvalidArgument, "the model does not translate ",
            query.source.empty() ? "*" : query.source, "->",
            query.target.empty() ? "*" : query.target, "; it translates ",
            joined(pairs, every, name_of));
  RPT_THROW(InvalidArgument, "the model translates ", joined(pairs, found, name_of), "; ",
            what_to_name(pairs, found));
}

std::string what_to_name(const std::vector<LanguagePair>& pairs,
                         const std::vector<std::size_t>& found) {
  for (const std::size_t i : found) {
    if (pairs[i].target != pairs[found.front()].target) {
      return "name the target language (one of " + joined(pairs, found, target_of) + ")";
    }
  }
  return "name the source language (one of " + joined(pairs, found, source_of) + ")";
}

bool same_language(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](unsigned char x, unsigned char y) {
    return std::tolower(x) == std::tolower(y);
  });
}

std::string_view primary_language(std::string_view code) {
  return code.substr(0, code.find_first_of("-_"));
}

std::string served_spelling(std::string_view code, const std::vector<std::string>& served) {
  for (const std::string_view wanted : {code, primary_language(code)}) {
    const auto found =
        std::find_if(served.begin(), served.end(),
                     [wanted](const std::string& each) { return same_language(each, wanted); });
    if (found != served.end()) return *found;
  }
  return {};
}

void validate_language_pairs(const std::vector<LanguagePair>& pairs, const std::string& origin) {
  RPT_CHECK(!pairs.empty(), ModelError, origin, ": language_pairs is empty; list at least one");
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const LanguagePair& pair = pairs[i];
    const std::string where = origin + ": language_pairs[" + std::to_string(i) + "]";
    RPT_CHECK(!pair.source.empty(), ModelError, where,
              " has no source (a language code, or \"*\" for any)");
    RPT_CHECK(!pair.target.empty() && pair.target != kAnySourceLanguage, ModelError, where,
              " needs a target language code");
    for (std::size_t j = 0; j < i; ++j) {
      RPT_CHECK(pairs[j].source != pair.source || pairs[j].target != pair.target, ModelError, where,
                " repeats ", pair.name(), " (language_pairs[", j, "])");
    }
  }
}

}  // namespace rpt
