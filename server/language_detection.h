// Language identification for calls that do not name their source language: LibreTranslate's
// `source: "auto"` and POST /detect, DeepL's omitted source_lang. The detector is Google's
// Compact Language Detector 2 (CLD2, Debian's libcld2, its default "chrome" tables); why CLD2,
// and its measured accuracy: docs/compatible-apis.md "Language identification".
//
// The answer is always one of `candidates`: the languages the server can use for the call (for
// an auto source into "de": the sources of the models into "de"). CLD2 is asked with those
// languages as its content-language hint (it takes at most four; more are narrowed four at a
// time), and only they are read from its top three.
//
// Bounded cost: only a prefix of the text is read, cut at a UTF-8 boundary (kMaxDetectedBytes in
// all; several texts share it, each at most its share, so a long first text cannot drown the
// others). Invalid UTF-8 ends the prefix there.
//
// Confidence (0-100): a reliable answer carries the share of the text in that language, a
// best-effort one (short text) 0.6 of it, about 60 at most. No answer among the candidates: the
// FIRST candidate (callers order them as the models are served) with confidence 0, as
// LibreTranslate answers "en" with 0. A candidate CLD2 does not know is never detected.
//
// Thread safety: every function here may be called from any number of threads at once with no
// lock: CLD2 keeps its scoring state on the caller's stack, its tables are constant, and the one
// static it writes per call (compact_lang_det_impl.cc's prior_lang, always the same constant)
// is read only by its HTML debug output, which rpt never enables; this file keeps no state.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace rpt::server {

class ModelRegistry;

struct LanguageGuess {
  std::string language;     // one of the candidates, as the caller spelled it
  double confidence = 0.0;  // 0-100
};

enum class DetectedText { kPlain, kMarkup };  // kMarkup: HTML or XML, tags and entities skipped

// At most this many bytes of a call's texts are read.
inline constexpr std::size_t kMaxDetectedBytes = 4096;

// The candidates `texts` may be in, best first: never empty when `candidates` is not (the
// fallback above), else empty. Several texts are detected as one (joined by newlines, each
// text's prefix at most its share of kMaxDetectedBytes): one call has one source language, and
// many short strings give CLD2 more evidence than any one of them. Languages after the first
// are those of CLD2's top three that are candidates, with their own confidence.
std::vector<LanguageGuess> rank_languages(const std::vector<std::string_view>& texts,
                                          const std::vector<std::string>& candidates,
                                          DetectedText kind = DetectedText::kPlain);

// The best of rank_languages: {"", 0} only when `candidates` is empty.
LanguageGuess detect_language(const std::vector<std::string_view>& texts,
                              const std::vector<std::string>& candidates,
                              DetectedText kind = DetectedText::kPlain);
LanguageGuess detect_language(std::string_view text, const std::vector<std::string>& candidates,
                              DetectedText kind = DetectedText::kPlain);

// The detector and its tables, for logs and docs: "CLD2 V2.0 - 20141016".
std::string language_detector_version();

// The source languages of the served pairs into `target` (as served_spelling reads it), in the
// order the models and their pairs are served, each once (the candidates of an auto source; a pair
// that reads any source adds every language the server names but `target`). Empty when no model
// translates into `target`.
std::vector<std::string> sources_into(const ModelRegistry& registry, const std::string& target);
// Every served source language (ModelRegistry::source_languages; the candidates of
// LibreTranslate's /detect).
std::vector<std::string> served_sources(const ModelRegistry& registry);

}  // namespace rpt::server
