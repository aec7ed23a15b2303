#include "engine/span_protection.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "engine/unreadable_words.h"
#include "kernels/errors.h"

namespace rpt {
namespace {

constexpr const char* kWordBoundary = "\xe2\x96\x81";  // SentencePiece's "▁"

bool is_tag_closing(std::string_view tag) { return tag.size() > 1 && tag[1] == '/'; }
bool is_self_closing(std::string_view tag) {
  return tag.ends_with("/>") || tag.starts_with("<!--");
}

std::string tag_name(std::string_view tag) {
  std::size_t i = is_tag_closing(tag) ? 2 : 1;
  std::size_t end = i;
  while (end < tag.size() && (std::isalnum(static_cast<unsigned char>(tag[end])) ||
                              tag[end] == '-' || tag[end] == '_' || tag[end] == ':')) {
    ++end;
  }
  return std::string(tag.substr(i, end - i));
}

// Sentinels tried for a span of `kind`, best first: its own family, then the numbered
// placeholders a model copies most neutrally.
int preference(SpanKind sentinel, SpanKind span) {
  if (sentinel == span) return 0;
  switch (sentinel) {
    case SpanKind::kPositional:
      return 1;
    case SpanKind::kBrace:
      return 2;
    case SpanKind::kPrintf:
      return 3;
    case SpanKind::kVariable:
      return 4;
    default:
      return 9;
  }
}

// One past the last span of the run of touching spans that starts at spans[first]: spans with
// nothing between them, none a tag (tags are masked with their partners) or a marker (taken out).
std::size_t touching_run_end(const std::vector<ProtectedSpan>& spans, std::size_t first) {
  const auto joins = [](const ProtectedSpan& span) {
    return span.kind != SpanKind::kTag && span.kind != SpanKind::kAccelerator;
  };
  std::size_t end = first + 1;
  if (!joins(spans[first])) return end;
  while (end < spans.size() && joins(spans[end]) && spans[end].begin == spans[end - 1].end) ++end;
  return end;
}

}  // namespace

// One protect() call: decides each span's representation and collects the constraints.
class SpanMasking {
 public:
  SpanMasking(const SpanProtector& protector, std::string_view source, bool mask)
      : protector_(protector), model_(*protector.model_), source_(source), mask_(mask) {}

  // How one span text is represented: what the model reads, and what the translation must hold.
  struct Choice {
    std::string replacement;  // what the model reads in its place
    std::vector<int> phrase;  // target ids the translation must contain; empty: unprotectable
  };

  Choice single(const std::string& text, SpanKind kind) {
    const auto known = singles_.find(text);
    if (known != singles_.end()) return known->second;
    Choice choice;
    if (const int id = own_piece(text); id >= 0) {
      choice = {text, {id}};
    } else if (const auto* sentinel = mask_ ? take_sentinel(kind, text) : nullptr) {
      choice = mask(*sentinel, text);
    } else {
      choice = {text, target_phrase(text)};
    }
    singles_.emplace(text, choice);
    return choice;
  }

  // An opening and its closing tag (or Markdown emphasis markers): both pieces of their own, or
  // masked by a sentinel pair.
  std::pair<Choice, Choice> pair(const std::string& open, const std::string& close) {
    const auto key = std::make_pair(open, close);
    const auto known = pairs_.find(key);
    if (known != pairs_.end()) return known->second;
    std::pair<Choice, Choice> choice;
    const int open_id = own_piece(open);
    const int close_id = own_piece(close);
    // Markers that open and close alike (Markdown's **bold**) are masked even when they are a
    // piece of their own: one piece for both could not keep the closing one after the opening.
    const bool own_pieces = open_id >= 0 && close_id >= 0 && open != close;
    const auto sentinel =
        own_pieces || !mask_
            ? std::make_pair<const SpanProtector::Sentinel*, const SpanProtector::Sentinel*>(
                  nullptr, nullptr)
            : take_sentinel_pair();
    if (sentinel.first) {
      choice = {mask(*sentinel.first, open), mask(*sentinel.second, close)};
    } else {
      choice = {single(open, SpanKind::kTag), single(close, SpanKind::kTag)};
    }
    pairs_.emplace(key, choice);
    return choice;
  }

  // A run of touching spans ("€%d", "{0}{1}", "%s%s") masked by one sentinel, or nullopt (masking
  // off, no sentinel free): the models read two placeholders with nothing between them as one,
  // wrote only the first, and the search put the other at the end ("Wert {0} wurde
  // gespeichert.{1}"). A positional sentinel (%1) first: a run mixes families, and the models
  // dropped or changed a rarer one ("Hello {2} world." came back as "Hello {1}.").
  std::optional<Choice> run(const std::string& text) {
    const auto known = singles_.find(text);
    if (known != singles_.end()) return known->second;
    const auto* sentinel = mask_ ? take_sentinel(SpanKind::kPositional) : nullptr;
    if (!sentinel) return std::nullopt;
    return singles_.emplace(text, mask(*sentinel, text)).first->second;
  }

  // A glossary term masked by a free placeholder that `target` replaces after decoding, or
  // nullopt when none is free. A placeholder of its own for each occurrence: a model copies each
  // placeholder of its source once, and "the %1 on the %2 server" reads as it should.
  std::optional<Choice> mask_term(const std::string& target, bool initial_capital) {
    const auto* sentinel = take_sentinel(SpanKind::kPositional);
    if (!sentinel) return std::nullopt;
    masks.push_back({sentinel->target_id, target, initial_capital, true});
    return Choice{sentinel->text, {sentinel->target_id}};
  }

  std::vector<ProtectedSource::Mask> masks;

 private:
  // The target id of `text` when it is one piece of its own on both sides, else -1.
  int own_piece(const std::string& text) const {
    if (!model_.source_tokenizer().is_single_piece(text)) return -1;
    if (!model_.target_tokenizer().is_single_piece(text)) return -1;
    if (!model_.target_vocabulary().contains(text)) return -1;
    return model_.target_vocabulary().to_id(text);
  }

  std::vector<int> target_phrase(const std::string& text) const {
    std::vector<std::string> pieces = model_.target_tokenizer().encode(text);
    if (!pieces.empty() && pieces.front() == kWordBoundary) pieces.erase(pieces.begin());
    std::vector<int> ids;
    for (const std::string& piece : pieces) {
      if (!model_.target_vocabulary().contains(piece)) return {};  // cannot be written exactly
      ids.push_back(model_.target_vocabulary().to_id(piece));
    }
    return ids;
  }

  bool free(const SpanProtector::Sentinel& s) const {
    return !used_.count(s.target_id) && source_.find(s.text) == std::string_view::npos;
  }

  // The free sentinel preferred for a span of `kind` and `text`, or nullptr. Tags only for tags of
  // the same shape: a self-closing tag (an HTML unit's <x id="1"/>) masked by <b> made the model
  // write a word after it, "<x/>L pour" where "<x/> pour" was right; with no tag of its shape
  // free, a placeholder of another family stands in.
  const SpanProtector::Sentinel* take_sentinel(SpanKind kind, std::string_view text = {}) {
    const SpanProtector::Sentinel* best = nullptr;
    for (const auto& s : protector_.sentinels_) {
      if (s.kind == SpanKind::kTag && (kind != SpanKind::kTag || !same_shape(s, text))) continue;
      if (!free(s)) continue;
      if (!best || preference(s.kind, kind) < preference(best->kind, kind)) best = &s;
    }
    if (best) used_.insert(best->target_id);
    return best;
  }

  static bool same_shape(const SpanProtector::Sentinel& sentinel, std::string_view tag) {
    if (is_self_closing(tag)) return sentinel.stands_alone;
    return !sentinel.stands_alone && sentinel.closing == is_tag_closing(tag);
  }

  // The first free opening tag of the pool whose closing tag is free too, or nullptr.
  std::pair<const SpanProtector::Sentinel*, const SpanProtector::Sentinel*> take_sentinel_pair() {
    const auto& pool = protector_.sentinels_;
    for (const auto& open : pool) {
      if (open.kind != SpanKind::kTag || open.closing || open.stands_alone || !free(open)) continue;
      for (const auto& close : pool) {
        if (!close.closing || close.tag_name != open.tag_name || !free(close)) continue;
        used_.insert(open.target_id);
        used_.insert(close.target_id);
        return {&open, &close};
      }
    }
    return {nullptr, nullptr};
  }

  Choice mask(const SpanProtector::Sentinel& sentinel, const std::string& original) {
    masks.push_back({sentinel.target_id, original, false, false});
    return {sentinel.text, {sentinel.target_id}};
  }

  const SpanProtector& protector_;
  const Model& model_;
  std::string_view source_;
  bool mask_;
  std::set<int> used_;
  std::map<std::string, Choice> singles_;
  std::map<std::pair<std::string, std::string>, std::pair<Choice, Choice>> pairs_;
};

SpanProtector::SpanProtector(std::shared_ptr<const Model> model) : model_(std::move(model)) {
  RPT_CHECK(model_ != nullptr, InvalidArgument, "SpanProtector needs a model");
  const Vocabulary& source = model_->source_vocabulary();
  for (int id = 0; id < source.size(); ++id) {
    const std::string& piece = source.to_token(id);
    const auto spans = find_protected_spans(piece, {.accelerators = false});
    if (spans.size() != 1 || spans[0].begin != 0 || spans[0].end != piece.size()) continue;
    // ° © are words of the model, and so are a piece that reads as an address (a host name) and
    // brackets ("(", "[."): none is a placeholder to mask with.
    if (spans[0].kind == SpanKind::kSymbol || spans[0].kind == SpanKind::kUrl ||
        spans[0].kind == SpanKind::kPluralNumber || spans[0].kind == SpanKind::kLoneBracket) {
      continue;
    }
    if (!model_->target_vocabulary().contains(piece)) continue;
    if (!model_->source_tokenizer().is_single_piece(piece) ||
        !model_->target_tokenizer().is_single_piece(piece)) {
      continue;
    }
    Sentinel sentinel{piece, model_->target_vocabulary().to_id(piece), spans[0].kind, {}, false};
    if (sentinel.kind == SpanKind::kTag) {
      sentinel.tag_name = tag_name(piece);
      sentinel.closing = is_tag_closing(piece);
      sentinel.stands_alone = is_self_closing(piece) || sentinel.tag_name == "br" ||
                              sentinel.tag_name == "hr" || sentinel.tag_name == "img";
    }
    sentinels_.push_back(std::move(sentinel));
  }
  // In vocabulary order: a SentencePiece model lists its placeholder symbols first, most
  // frequent first (training/placeholders.py), so the first free sentinel is one the model
  // has seen most.

  const Vocabulary& target = model_->target_vocabulary();
  auto token_texts = std::make_shared<std::vector<std::string>>();
  for (int id = 0; id < target.size(); ++id) {
    const std::string& piece = target.to_token(id);
    const std::optional<unsigned char> byte = fallback_byte(piece);
    const std::string text = byte ? std::string(1, static_cast<char>(*byte)) : piece;
    std::string spaced;  // SentencePiece's word boundary is a space in the text
    const std::string_view boundary(kWordBoundary);
    for (std::size_t i = 0; i < text.size();) {
      if (std::string_view(text).substr(i, boundary.size()) == boundary) {
        spaced.push_back(' ');
        i += boundary.size();
      } else {
        spaced.push_back(text[i++]);
      }
    }
    token_texts->push_back(std::move(spaced));
    // <word> and </word>: the vocabulary's special tokens (<unk>, </s>) or tags, which are
    // banned as sentinels when the recognizer takes them for spans.
    const bool bracketed =
        text.size() > 2 && text.front() == '<' && text.back() == '>' &&
        std::all_of(text.begin() + 1, text.end() - 1, [](char ch) {
          return std::isalnum(static_cast<unsigned char>(ch)) || ch == '/' || ch == '_';
        });
    if (bracketed) continue;
    for (std::size_t c = 0; c < kSpanOpeners.size(); ++c) {
      if (text.find(kSpanOpeners[c]) != std::string::npos) opener_pieces_[c].push_back(id);
    }
  }
  token_texts_ = std::move(token_texts);
}

std::vector<int> SpanProtector::target_ids(const std::string& text) const {
  std::vector<int> ids;
  for (const std::string& piece : model_->target_tokenizer().encode(text)) {
    if (!model_->target_vocabulary().contains(piece)) return {};
    ids.push_back(model_->target_vocabulary().to_id(piece));
  }
  return ids;
}

bool SpanProtector::writable(std::string_view text) const {
  const Vocabulary& vocabulary = model_->target_vocabulary();
  for (const std::string& piece : model_->target_tokenizer().encode(std::string(text))) {
    if (fallback_byte(piece) || !vocabulary.contains(piece)) return false;
  }
  return true;
}

bool SpanProtector::readable(std::string_view text) const {
  const Vocabulary& vocabulary = model_->source_vocabulary();
  for (const std::string& piece : model_->source_tokenizer().encode(std::string(text))) {
    if (fallback_byte(piece) || !vocabulary.contains(piece)) return false;
  }
  return true;
}

void SpanProtector::drop_writable_symbols(std::string_view source,
                                          std::vector<ProtectedSpan>& spans) const {
  std::vector<int> index(spans.size(), -1);
  std::vector<ProtectedSpan> kept;
  for (std::size_t i = 0; i < spans.size(); ++i) {
    const ProtectedSpan& span = spans[i];
    if (span.kind == SpanKind::kSymbol &&
        writable(source.substr(span.begin, span.end - span.begin))) {
      continue;
    }
    index[i] = static_cast<int>(kept.size());
    kept.push_back(span);
  }
  if (kept.size() == spans.size()) return;
  for (ProtectedSpan& span : kept) {
    if (span.partner >= 0) span.partner = index[static_cast<std::size_t>(span.partner)];
  }
  spans = std::move(kept);
}

void SpanProtector::check_glossary(const Glossary& glossary, std::string_view what) const {
  const Vocabulary& vocabulary = model_->target_vocabulary();
  for (std::size_t i = 0; i < glossary.entries().size(); ++i) {
    const std::string& target = glossary.entries()[i].target;
    for (const std::string& piece : model_->target_tokenizer().encode(target)) {
      RPT_CHECK(vocabulary.contains(piece), InvalidArgument, what, "[", i, "]: the target \"",
                target, "\" cannot be written with the model's target vocabulary (no piece for \"",
                piece, "\")");
    }
  }
}

std::vector<int> SpanProtector::banned_tokens(std::string_view source, bool spans,
                                              const std::vector<PhraseConstraint>& phrases) const {
  std::vector<int> banned;
  for (const Sentinel& sentinel : sentinels_) banned.push_back(sentinel.target_id);
  for (std::size_t c = 0; spans && c < kSpanOpeners.size(); ++c) {
    if (source.find(kSpanOpeners[c]) != std::string_view::npos) continue;
    banned.insert(banned.end(), opener_pieces_[c].begin(), opener_pieces_[c].end());
  }
  std::sort(banned.begin(), banned.end());
  banned.erase(std::unique(banned.begin(), banned.end()), banned.end());
  for (const PhraseConstraint& phrase : phrases) {  // what the source asks for stays allowed
    for (int id : phrase.ids) {
      const auto found = std::lower_bound(banned.begin(), banned.end(), id);
      if (found != banned.end() && *found == id) banned.erase(found);
    }
  }
  return banned;
}

ProtectedSource SpanProtector::protect(std::string_view source,
                                       const SpanProtectionOptions& options,
                                       const GlossaryUse& glossary) const {
  ProtectedSource out;
  out.accelerators = options.accelerators;
  if (!options.enabled && glossary.empty()) {
    out.text = std::string(source);
    return out;
  }
  auto spans = options.enabled
                   ? find_protected_spans(source, {.accelerators = options.accelerators})
                   : std::vector<ProtectedSpan>{};
  drop_writable_symbols(source, spans);
  const auto matches = match_glossary(source, glossary, spans);
  if (!options.enabled && matches.empty()) {
    out.text = std::string(source);
    return out;
  }
  std::set<std::size_t> word_begins;  // of the words added as spans
  if (options.enabled) {              // after the glossary: a term is matched in the words it has
    ByteSpans terms;
    for (const GlossaryMatch& match : matches) terms.emplace_back(match.begin, match.end);
    const ByteSpans words = add_unreadable_words(
        source, terms, [this](std::string_view word) { return readable(word); }, spans);
    for (const auto& [begin, end] : words) {
      word_begins.insert(begin);
      out.words.emplace_back(source.substr(begin, end - begin));
    }
  }
  out.spans = static_cast<int>(spans.size());
  SpanMasking masking(*this, source, options.mask);
  // Phrases in the order of their first span; a closing tag's phrase notes its opening one.
  std::vector<PhraseConstraint> phrases;
  std::map<std::vector<int>, int> phrase_index;
  std::map<int, int> opener_of;  // closing phrase -> opening phrase; -1 once inconsistent
  const auto add = [&](const std::vector<int>& phrase) {
    if (phrase.empty()) return -1;
    const auto [it, inserted] = phrase_index.emplace(phrase, static_cast<int>(phrases.size()));
    if (inserted) phrases.push_back({phrase, 0, -1});
    ++phrases[static_cast<std::size_t>(it->second)].count;
    return it->second;
  };
  // One text phrase per target text (an occurrence counts once, whichever entry or spelling
  // asked for it); its spellings gain the capitalised form where an occurrence allows it.
  std::map<std::string, int> text_index;
  const auto add_text = [&](const std::string& target, bool capitalized,
                            const std::vector<int>& ids) {
    if (ids.empty()) return -1;
    const auto [it, inserted] = text_index.emplace(target, static_cast<int>(phrases.size()));
    if (inserted) phrases.push_back({ids, 0, -1, {target}});
    PhraseConstraint& phrase = phrases[static_cast<std::size_t>(it->second)];
    const std::string capital = capitalize_first(target);
    if (capitalized && capital != target && phrase.texts.size() == 1) {
      phrase.texts.push_back(capital);
    }
    ++phrase.count;
    return it->second;
  };
  // What the model reads in place of each span and glossary match (they never overlap).
  struct Replacement {
    std::size_t begin = 0;
    std::size_t end = 0;
    std::string text;
  };
  std::vector<Replacement> replacements(spans.size());
  for (std::size_t i = 0; i < spans.size(); ++i) {
    const ProtectedSpan& span = spans[i];
    const std::string text(source.substr(span.begin, span.end - span.begin));
    replacements[i].begin = span.begin;
    replacements[i].end = span.end;
    if (span.kind == SpanKind::kAccelerator) {
      if (out.accelerator_marker.empty() && span.end < source.size()) {
        out.accelerator_marker = text;
        std::size_t next = span.end + 1;
        while (next < source.size() && (static_cast<unsigned char>(source[next]) & 0xC0) == 0x80) {
          ++next;
        }
        out.accelerator_letter = std::string(source.substr(span.end, next - span.end));
        out.expected.push_back(text);
        continue;  // replacement "": the marker is taken out
      }
      replacements[i].text = text;  // a second marker stays as text
      continue;
    }
    const std::size_t run_end = touching_run_end(spans, i);
    if (run_end > i + 1) {
      const std::size_t end = spans[run_end - 1].end;
      if (const auto choice =
              masking.run(std::string(source.substr(span.begin, end - span.begin)))) {
        for (std::size_t k = i; k < run_end; ++k) {
          const ProtectedSpan& part = spans[k];
          if (!word_begins.contains(part.begin)) {
            out.expected.emplace_back(source.substr(part.begin, part.end - part.begin));
          }
          replacements[k] = {end, end, {}};  // the run's first replacement covers them all
        }
        replacements[i] = {span.begin, end, choice->replacement};
        const int phrase = add(choice->phrase);
        if (phrase >= 0) opener_of[phrase] = -1;
        i = run_end - 1;
        continue;
      }
    }
    if (!word_begins.contains(span.begin)) out.expected.push_back(text);
    if (span.kind == SpanKind::kTag && span.partner > static_cast<int>(i)) {
      const ProtectedSpan& closing = spans[static_cast<std::size_t>(span.partner)];
      const std::string close(source.substr(closing.begin, closing.end - closing.begin));
      const auto [open_choice, close_choice] = masking.pair(text, close);
      replacements[i].text = open_choice.replacement;
      replacements[static_cast<std::size_t>(span.partner)].text = close_choice.replacement;
      const int open_phrase = add(open_choice.phrase);
      const int close_phrase = add(close_choice.phrase);
      if (close_phrase >= 0 && close_phrase != open_phrase) {
        const auto [it, inserted] = opener_of.emplace(close_phrase, open_phrase);
        if (!inserted && it->second != open_phrase) it->second = -1;
      }
      continue;
    }
    if (span.kind == SpanKind::kTag && span.partner >= 0) continue;  // closed with its pair
    const auto choice = masking.single(text, span.kind);
    replacements[i].text = choice.replacement;
    const int phrase = add(choice.phrase);
    if (phrase >= 0) opener_of[phrase] = -1;  // also stands alone: no order to keep
  }
  std::map<std::pair<int, int>, std::size_t> term_index;  // (glossary, entry) -> out.terms
  for (const GlossaryMatch& match : matches) {
    const GlossaryEntry& entry = glossary.glossaries[static_cast<std::size_t>(match.glossary)]
                                     ->entries()[static_cast<std::size_t>(match.entry)];
    const auto [it, inserted] =
        term_index.emplace(std::make_pair(match.glossary, match.entry), out.terms.size());
    if (inserted) out.terms.push_back({entry.source, entry.target, 0, false});
    ProtectedSource::Term& term = out.terms[it->second];
    ++term.matches;
    term.capitalized = term.capitalized || match.capitalized;
    std::string replacement(source.substr(match.begin, match.end - match.begin));
    const auto masked = glossary.method == GlossaryMethod::kMask
                            ? masking.mask_term(entry.target, match.initial_capital)
                            : std::nullopt;
    int phrase = -1;
    if (masked) {
      replacement = masked->replacement;
      phrase = add(masked->phrase);
    } else {
      // The model reads the term; its target counts as text, whatever pieces write it, with a
      // capital where the source has one; an insertion writes it as the source's case has it.
      const std::vector<int> ids =
          target_ids(match.initial_capital ? capitalize_first(entry.target) : entry.target);
      phrase = add_text(entry.target, match.capitalized, ids);
    }
    if (phrase >= 0) opener_of[phrase] = -1;
    replacements.push_back({match.begin, match.end, std::move(replacement)});
  }
  // Terms sharing a target share its phrase, and so the capital one of them allows.
  for (ProtectedSource::Term& term : out.terms) {
    for (const ProtectedSource::Term& other : out.terms) {
      if (other.target == term.target) term.capitalized = term.capitalized || other.capitalized;
    }
  }
  for (const auto& [closing, opening] : opener_of) {
    auto& phrase = phrases[static_cast<std::size_t>(closing)];
    if (opening >= 0 && phrases[static_cast<std::size_t>(opening)].count == phrase.count) {
      phrase.opener = opening;
    }
  }
  std::sort(replacements.begin(), replacements.end(),
            [](const Replacement& a, const Replacement& b) {  // a run's empty ones first
              return std::tie(a.begin, a.end) < std::tie(b.begin, b.end);
            });
  std::size_t at = 0;
  for (const Replacement& r : replacements) {
    out.text.append(source.substr(at, r.begin - at));
    out.text += r.text;
    at = r.end;
  }
  out.text.append(source.substr(at));
  out.masks = std::move(masking.masks);
  std::vector<int> banned = banned_tokens(source, options.enabled, phrases);
  out.constraints = std::make_shared<DecodingConstraints>(
      std::move(phrases), std::move(banned), text_index.empty() ? nullptr : token_texts_);
  return out;
}

}  // namespace rpt
