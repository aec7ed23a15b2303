// Glossaries: a customer's terminology enforced in translations (docs/glossaries.md). An entry maps
// a source term to the text every translation of it must hold (target == source: do not
// translate). Matching: whole words, case-insensitive by Unicode simple case folding, leftmost
// then longest, never overlapping a protected span; engine/span_protection.h turns each match
// into a decoding constraint. Thread-safe once built: share one Glossary across calls.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "spans/protected_spans.h"

namespace rpt {

struct GlossaryEntry {
  std::string source;
  std::string target;
};

struct GlossaryLimits {
  static constexpr int kEntriesPerCall = 1000;    // entries sent with one request
  static constexpr int kEntriesPerFile = 100000;  // entries of one named glossary file
  static constexpr std::size_t kTermBytes = 256;  // bytes of one source or target term
};

// How a matched term reaches the translation. kMask is the default: where the model would not
// write the term, kMask keeps it in its place far more often than kPhrase, which appends it after
// the sentence (both compared on the test splits: docs/glossaries.md "Evaluation").
enum class GlossaryMethod {
  // The model reads a placeholder in the term's place, copies it like any placeholder, and the
  // target text replaces it after decoding (falls back to kPhrase when no placeholder is free).
  kMask,
  // The model reads the term; the target text is a phrase the translation must contain,
  // counted in the decoded text whatever pieces write it, inserted as its own pieces where the
  // model would stop without it.
  kPhrase,
};

// "mask" / "phrase"; InvalidArgument for anything else.
GlossaryMethod parse_glossary_method(std::string_view name);
const char* glossary_method_name(GlossaryMethod method);

class Glossary {
 public:
  // How a refused entry is named, from its index (e.g. "PATH:LINE"); empty: `what`[index].
  using EntryNames = std::function<std::string(std::size_t index)>;

  // Checks every entry and throws InvalidArgument naming it (`what`[index], e.g. "glossary[3]"):
  // an empty or blank term, invalid UTF-8, a term over kTermBytes or holding a protected span
  // (a placeholder or tag: spans are protected on their own), a source listed twice (after
  // case folding) with different targets, more than `max_entries` entries. A source listed
  // twice with the same target is kept once.
  Glossary(std::vector<GlossaryEntry> entries, int max_entries, std::string_view what = "glossary",
           const EntryNames& entry_name = {});

  // A TSV file: "source<TAB>target" a line; blank lines and lines starting with '#' are skipped.
  // Throws InvalidArgument naming "PATH:LINE" for a malformed line or a refused entry.
  static Glossary load(const std::string& path, int max_entries = GlossaryLimits::kEntriesPerFile);

  const std::vector<GlossaryEntry>& entries() const { return entries_; }
  int size() const { return static_cast<int>(entries_.size()); }
  bool empty() const { return entries_.empty(); }
  // Equal for glossaries with the same entries in the same order (a cache key's part).
  const std::string& identity() const { return identity_; }

  // The entry whose case-folded source is `folded`, or -1.
  int find(const std::u32string& folded) const;
  // Lengths (code points) of the folded sources, longest first.
  const std::vector<std::size_t>& lengths() const { return lengths_; }

 private:
  std::vector<GlossaryEntry> entries_;
  std::unordered_map<std::u32string, int> by_folded_source_;
  std::vector<std::size_t> lengths_;
  std::string identity_;
};

// The glossaries a call uses, earliest first on ties (a call's own entries before a named
// glossary's), and how their terms are enforced. Borrowed: the glossaries outlive the call.
struct GlossaryUse {
  std::vector<const Glossary*> glossaries;
  GlossaryMethod method = GlossaryMethod::kMask;

  bool empty() const;
  // The glossaries' identities and the method: part of a translation cache key.
  std::string identity() const;
};

struct GlossaryMatch {
  int glossary = 0;       // index into GlossaryUse::glossaries
  int entry = 0;          // index into that glossary's entries()
  std::size_t begin = 0;  // bytes of the source text
  std::size_t end = 0;
  // The match starts with a capital where the entry's source has none (a sentence start, a
  // title-case string): the translation may hold the target with its first letter capitalised.
  bool capitalized = false;
  // ... and opens the text (only spaces and punctuation before it).
  bool initial_capital = false;
};

// Whole-word matches of `use`'s glossaries in `text` (valid UTF-8), left to right: at each
// position the longest entry (then the earliest glossary's), none overlapping `spans` (sorted,
// as find_protected_spans returns them).
std::vector<GlossaryMatch> match_glossary(std::string_view text, const GlossaryUse& use,
                                          const std::vector<ProtectedSpan>& spans);

// `text` with its first letter upper-cased (Unicode simple mapping).
std::string capitalize_first(std::string_view text);

// Occurrences of `term` in `text` (non-overlapping); with `also_capitalized`, also of its
// capitalised form.
int count_term(std::string_view text, std::string_view term, bool also_capitalized);

}  // namespace rpt
