#include "server/language_detection.h"

// CLD2's public header uses FILE and std::vector without including what declares them.
#include <cstdio>
#include <vector>

#include <cld2/public/compact_lang_det.h>
#include <cld2/public/encodings.h>

#include <algorithm>
#include <cctype>

#include "server/model_registry.h"

namespace rpt::server {
namespace {

// CLD2 takes at most four languages as hints (it trims its priors to four).
constexpr std::size_t kMaxHinted = 4;
// A text's share of kMaxDetectedBytes is never cut below this (a few words).
constexpr std::size_t kMinShareBytes = 64;
// Confidence of a best-effort answer per percent of the text, below a reliable answer's 1 as
// such answers are less often right (docs/compatible-apis.md "Language identification").
constexpr double kBestEffortWeight = 0.6;

// A candidate CLD2 knows, and where it stands in the caller's list.
struct Known {
  CLD2::Language language;
  std::size_t index;
};

// The CLD2 language of a served code ("en", "pt-BR", "nb", "he"), or UNKNOWN_LANGUAGE.
CLD2::Language cld2_language(const std::string& code) {
  std::string lower(code);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::replace(lower.begin(), lower.end(), '_', '-');
  CLD2::Language language = CLD2::GetLanguageFromName(lower.c_str());
  if (language == CLD2::UNKNOWN_LANGUAGE && lower.find('-') != std::string::npos) {
    language = CLD2::GetLanguageFromName(lower.substr(0, lower.find('-')).c_str());
  }
  return language;
}

// At most `limit` bytes of `text`, cut before a UTF-8 continuation byte.
std::string_view utf8_prefix(std::string_view text, std::size_t limit) {
  if (text.size() <= limit) return text;
  std::size_t end = limit;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end);
}

struct Cld2Answer {
  CLD2::Language language3[3] = {CLD2::UNKNOWN_LANGUAGE, CLD2::UNKNOWN_LANGUAGE,
                                 CLD2::UNKNOWN_LANGUAGE};
  int percent3[3] = {0, 0, 0};
  bool reliable = false;
};

// One CLD2 call over `text`, `hinted` boosted. CLD2 answers nothing for text with bytes that
// are not interchange-valid UTF-8: then it is asked again about the valid part before them.
Cld2Answer run_cld2(std::string_view text, DetectedText kind, const std::vector<Known>& hinted,
                    bool best_effort) {
  std::string hint;
  for (const Known& known : hinted) {
    hint += std::string(hint.empty() ? "" : ",") + CLD2::LanguageCode(known.language);
  }
  const CLD2::CLDHints hints = {hint.empty() ? nullptr : hint.c_str(), nullptr,
                                CLD2::UNKNOWN_ENCODING, CLD2::UNKNOWN_LANGUAGE};
  Cld2Answer answer;
  double normalized_score3[3];
  int text_bytes = 0;
  int valid_prefix_bytes = 0;
  CLD2::ExtDetectLanguageSummaryCheckUTF8(
      text.data(), static_cast<int>(text.size()), kind == DetectedText::kPlain, &hints,
      best_effort ? CLD2::kCLDFlagBestEffort : 0, answer.language3, answer.percent3,
      normalized_score3, nullptr, &text_bytes, &answer.reliable, &valid_prefix_bytes);
  if (valid_prefix_bytes >= 0 && static_cast<std::size_t>(valid_prefix_bytes) < text.size()) {
    return run_cld2(text.substr(0, static_cast<std::size_t>(valid_prefix_bytes)), kind, hinted,
                    best_effort);
  }
  return answer;
}

struct Ranked {
  std::size_t index;  // in the caller's candidates
  double confidence;
};

// CLD2 among `group` (at most kMaxHinted candidates, hinted): its answer when it has one, else
// its best effort; only the group's languages, in CLD2's order. Empty when neither names one.
std::vector<Ranked> detect_group(std::string_view text, DetectedText kind,
                                 const std::vector<Known>& group) {
  for (const bool best_effort : {false, true}) {
    const Cld2Answer answer = run_cld2(text, kind, group, best_effort);
    const double weight = best_effort || !answer.reliable ? kBestEffortWeight : 1.0;
    std::vector<Ranked> ranked;
    for (int i = 0; i < 3; ++i) {
      const auto found = std::find_if(group.begin(), group.end(), [&](const Known& known) {
        return known.language == answer.language3[i];
      });
      const bool seen = std::any_of(ranked.begin(), ranked.end(), [&](const Ranked& r) {
        return found != group.end() && r.index == found->index;
      });
      if (found != group.end() && !seen) {
        ranked.push_back({found->index, weight * std::clamp(answer.percent3[i], 0, 100)});
      }
    }
    if (!ranked.empty()) return ranked;
  }
  return {};
}

// More candidates than CLD2 takes as hints: four at a time, each group's best goes on, until
// one group is left.
std::vector<Ranked> detect_known(std::string_view text, DetectedText kind,
                                 std::vector<Known> known) {
  while (known.size() > kMaxHinted) {
    std::vector<Known> winners;
    for (std::size_t begin = 0; begin < known.size(); begin += kMaxHinted) {
      const std::vector<Known> group(
          known.begin() + static_cast<std::ptrdiff_t>(begin),
          known.begin() + static_cast<std::ptrdiff_t>(std::min(begin + kMaxHinted, known.size())));
      const std::vector<Ranked> best = detect_group(text, kind, group);
      if (best.empty()) continue;
      for (const Known& k : group) {
        if (k.index == best.front().index) winners.push_back(k);
      }
    }
    if (winners.empty()) return {};
    known = std::move(winners);
  }
  return detect_group(text, kind, known);
}

}  // namespace

std::vector<LanguageGuess> rank_languages(const std::vector<std::string_view>& texts,
                                          const std::vector<std::string>& candidates,
                                          DetectedText kind) {
  if (candidates.empty()) return {};
  // The candidates CLD2 knows, each language once (the first spelling of it wins).
  std::vector<Known> known;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const CLD2::Language language = cld2_language(candidates[i]);
    const bool seen = std::any_of(known.begin(), known.end(),
                                  [&](const Known& k) { return k.language == language; });
    if (language != CLD2::UNKNOWN_LANGUAGE && !seen) known.push_back({language, i});
  }
  // The texts' prefixes, joined: each at most its share of kMaxDetectedBytes.
  std::string joined;
  std::size_t nonempty = 0;
  for (std::string_view text : texts) nonempty += text.empty() ? 0 : 1;
  const std::size_t share =
      std::max(kMaxDetectedBytes / std::max<std::size_t>(nonempty, 1), kMinShareBytes);
  for (std::string_view text : texts) {
    if (text.empty()) continue;
    if (joined.size() + 1 >= kMaxDetectedBytes) break;
    if (!joined.empty()) joined += '\n';
    joined += utf8_prefix(text, std::min(share, kMaxDetectedBytes - joined.size()));
  }
  std::vector<LanguageGuess> guesses;
  if (!known.empty() && !joined.empty()) {
    for (const Ranked& ranked : detect_known(joined, kind, known)) {
      guesses.push_back({candidates[ranked.index], ranked.confidence});
    }
  }
  if (guesses.empty()) guesses.push_back({candidates.front(), 0.0});
  return guesses;
}

LanguageGuess detect_language(const std::vector<std::string_view>& texts,
                              const std::vector<std::string>& candidates, DetectedText kind) {
  std::vector<LanguageGuess> guesses = rank_languages(texts, candidates, kind);
  return guesses.empty() ? LanguageGuess{} : std::move(guesses.front());
}

LanguageGuess detect_language(std::string_view text, const std::vector<std::string>& candidates,
                              DetectedText kind) {
  return detect_language(std::vector<std::string_view>{text}, candidates, kind);
}

std::string language_detector_version() {
  return std::string("CLD2 ") + CLD2::DetectLanguageVersion();
}

std::vector<std::string> sources_into(const ModelRegistry& registry, const std::string& target) {
  std::vector<std::string> sources;
  const auto add = [&sources](const std::string& source) {
    if (!source.empty() && std::find(sources.begin(), sources.end(), source) == sources.end()) {
      sources.push_back(source);
    }
  };
  const std::shared_ptr<const ModelCatalog> catalog = registry.catalog();
  const std::string served_target = served_spelling(target, catalog->target_languages);
  for (const auto& model : catalog->models) {
    for (const LanguagePair& pair : model->model->language_pairs()) {
      if (pair.target != served_target) continue;
      if (!pair.reads_any_source()) {
        add(pair.source);
        continue;
      }
      for (const std::string& source : catalog->languages) {
        if (source != served_target) add(source);
      }
    }
  }
  return sources;
}

std::vector<std::string> served_sources(const ModelRegistry& registry) {
  return registry.source_languages();
}

}  // namespace rpt::server
