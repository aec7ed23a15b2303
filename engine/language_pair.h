// The directions a model translates (config.json's language_pairs, docs/model-format.md): one
// for most models; several for a multilingual one, each picked by what the model reads before
// the text (T5's "translate English to German: ", MADLAD-400's "<2de> ").
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace rpt {

// A pair's source when the model reads any language (MADLAD-400: its prefix names the target
// only).
inline constexpr std::string_view kAnySourceLanguage = "*";

struct LanguagePair {
  std::string source;  // a language code, kAnySourceLanguage, or empty (not declared)
  std::string target;  // empty only for an old config that declares none
  std::string prefix;  // read before every source of this pair; empty for most models

  bool reads_any_source() const { return source == kAnySourceLanguage; }
  // "en->de", "*->de".
  std::string name() const;
};

// What a caller asks of a model's pairs; an empty field is unset and matches any pair.
struct LanguageQuery {
  std::string_view source;
  std::string_view target;
};

// How well a pair serves a query: not at all, through kAnySourceLanguage, or by its own source (or
// any pair when the query names no source). A pair of the source asked for wins over one that
// reads any source: a model's own direction before a catch-all.
enum class PairMatch { kNone, kAnySource, kSource };
PairMatch match_pair(const LanguagePair& pair, const LanguageQuery& query);

// The indexes of the pairs of `pairs` that serve `query` best (match_pair), in order.
std::vector<std::size_t> matching_pairs(const std::vector<LanguagePair>& pairs,
                                        const LanguageQuery& query);

// The one pair of `pairs` that serves `query` best: InvalidArgument naming the pairs when none
// or several do (a multilingual model asked without a target).
std::size_t pick_language_pair(const std::vector<LanguagePair>& pairs, const LanguageQuery& query);

// What a query that several pairs serve (`found`, indexes into `pairs`) leaves open, for a
// message: "name the target language (one of de, fr, ro)", or the source when they share the
// target.
std::string what_to_name(const std::vector<LanguagePair>& pairs,
                         const std::vector<std::size_t>& found);

// Whether `a` and `b` are the same language code, case aside: "EN" is "en", "pt-br" is "pt-BR".
bool same_language(std::string_view a, std::string_view b);

// A BCP 47 code's primary language subtag: "en" of "en-US", "zh" of "zh_Hant"; the code itself
// when it has no subtags.
std::string_view primary_language(std::string_view code);

// `code` as `served` spells it: the served code that is the same language (same_language), else
// the one that is its primary language (a region or script no model names falls back); empty
// when none is. Every API resolves a request's languages through it (server/model_registry.h).
std::string served_spelling(std::string_view code, const std::vector<std::string>& served);

// Checks a config's explicit language_pairs: at least one, each with a source (a code or "*")
// and a target, no pair twice; throws ModelError starting with `origin`.
void validate_language_pairs(const std::vector<LanguagePair>& pairs, const std::string& origin);

}  // namespace rpt
