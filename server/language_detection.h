// Language identification for calls that do not name their source language: LibreTranslate's
// `source: "auto"` and POST /detect, DeepL's omitted source_lang (docs/compatible-apis.md).
//
// The detector is Google's Compact Language Detector 2 (CLD2, Debian's libcld2, its default
// "chrome" tables), chosen over libexttextcat on the repository's held-out UI strings: it is the
// more accurate on short strings once restricted to the served languages, and 5-10 times faster
// (docs/compatible-apis.md has the measured tables).
//
// The answer is always one of `candidates`: the languages the server can use for the call (for
// an auto source into "de": the sources of the models into "de"). CLD2 is asked with those
// languages as its content-language hint (it takes at most four; more are narrowed four at a
// time), and only they are read from its top three. A restricted choice is far more accurate
// than an open one: German strings of 1-10 characters among {en, de}: 94%; an open CLD2: 45%.
//
// Bounded cost: only a prefix of the text is read, cut at a UTF-8 boundary (kMaxDetectedBytes in
// all; several texts share it, each at most its share, so a long first text cannot drown the
// others). Invalid UTF-8 ends the prefix there.
//
// No reliable answer: CLD2 then gives a best effort answer for short text (confidence lower:
// about 60 at most); when that is none of the candidates either, the answer is the FIRST
// candidate (callers order them as the models are served, so that is the first served model's
// source) with confidence 0, as LibreTranslate answers "en" with 0 for what it cannot detect.
// A candidate CLD2 does not know (it knows about 80 languages; "zt" is not a code of its) is
// never detected, only the fallback.
//
// Confidence (0-100) follows the measured accuracy: an answer CLD2 calls reliable carries the
// share of the text in that language (typically 90-100; right 96-100% of the time on the
// held-out strings), a best-effort one 0.6 of it (answers under 90 are right 65-80% of the time).
//
// Thread safety: every function here may be called from any number of threads at once with no
// lock. CLD2 is built for it (its design notes: "Thread safe"): its scoring state lives on the
// caller's stack, its tables are constant, and this file keeps no state of its own. The one
// static CLD2 writes per call is a debug-output variable (compact_lang_det_impl.cc's prior_lang,
// "for --cld_html debugging output. Not thread safe"): each call stores the same constant in it,
// and only the HTML debug flags, which rpt never sets, read it. (libexttextcat, the alternative,
// keeps scratch buffers in its handle: one handle per thread or a lock.)
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

// The source languages of the served models into `target`, in the order the models are served,
// each once (the candidates of an auto source). Empty when no model translates into `target`.
std::vector<std::string> sources_into(const ModelRegistry& registry, const std::string& target);
// Every served source language, in the same order (the candidates of LibreTranslate's /detect).
std::vector<std::string> served_sources(const ModelRegistry& registry);

}  // namespace rpt::server
