#include "server/request_validation.h"

#include <cmath>
#include <string>

#include "engine/errors.h"
#include "common/text_hygiene.h"
#include "engine/text_segments.h"

namespace rpt::server {
namespace {

constexpr int kMaxIgnoredTags = 64;

RequestStatus invalid(std::string message) {
  return {StatusCode::kInvalidArgument, std::move(message)};
}

LengthPenaltyType to_engine(v1::LengthPenaltyType type, LengthPenaltyType fallback) {
  switch (type) {
    case v1::LENGTH_PENALTY_TYPE_AVERAGE:
      return LengthPenaltyType::kAverage;
    case v1::LENGTH_PENALTY_TYPE_GNMT:
      return LengthPenaltyType::kGnmt;
    case v1::LENGTH_PENALTY_TYPE_NONE:
      return LengthPenaltyType::kNone;
    default:
      return fallback;
  }
}

// The call's glossary entries (checked, limited to kEntriesPerCall, writable by the model) and
// the named glossary, into prepared->glossary.
RequestStatus prepare_glossary(const v1::TranslateRequest& request, const ServedModel& model,
                               PreparedRequest* prepared) {
  if (request.glossary_size() > 0) {
    std::vector<GlossaryEntry> entries;
    entries.reserve(static_cast<std::size_t>(request.glossary_size()));
    for (const v1::GlossaryEntry& entry : request.glossary()) {
      entries.push_back({entry.source(), entry.target()});
    }
    try {
      prepared->call_glossary = std::make_shared<const Glossary>(
          std::move(entries), GlossaryLimits::kEntriesPerCall, "glossary");
      model.span_protector->check_glossary(*prepared->call_glossary, "glossary");
    } catch (const InvalidArgument& e) {
      return invalid(e.message());
    }
    prepared->glossary.glossaries.push_back(prepared->call_glossary.get());
  }
  if (!request.glossary_name().empty()) {
    const std::shared_ptr<const NamedGlossaries> glossaries = model.glossaries.get();
    const auto found = glossaries->find(request.glossary_name());
    if (found == glossaries->end()) {
      std::string loaded;
      for (const auto& [name, glossary] : *glossaries) {
        loaded += (loaded.empty() ? "" : ", ") + name;
      }
      return {StatusCode::kNotFound, "model " + model.name + " has no glossary named '" +
                                         echoed_text(request.glossary_name()) +
                                         "'; loaded: " + (loaded.empty() ? "none" : loaded)};
    }
    prepared->named_glossary = found->second;
    prepared->glossary.glossaries.push_back(prepared->named_glossary.get());
  }
  prepared->glossary.method = model.glossary_method;
  return RequestStatus::Ok();
}

}  // namespace

RequestStatus resolve_options(const v1::DecodingOptions& request, const DecodingOptions& defaults,
                              const RequestLimits& limits, const Model& model,
                              DecodingOptions* resolved) {
  DecodingOptions o = defaults;
  if (request.beam_size() != 0) {
    if (request.beam_size() > static_cast<unsigned>(limits.max_beam_size)) {
      return invalid("options.beam_size is " + std::to_string(request.beam_size()) +
                     ", over the limit of " + std::to_string(limits.max_beam_size));
    }
    o.beam_size = static_cast<int>(request.beam_size());
  }
  if (o.beam_size > model.target_vocabulary().size()) {  // a tiny model's vocabulary
    return invalid("beam size " + std::to_string(o.beam_size) + " exceeds the model's " +
                   std::to_string(model.target_vocabulary().size()) + "-token target vocabulary");
  }
  // An unset n_best follows a smaller requested beam rather than failing.
  o.n_best = request.n_best() != 0 ? static_cast<int>(request.n_best())
                                   : std::min(defaults.n_best, o.beam_size);
  if (request.n_best() > 256 || o.n_best > o.beam_size) {
    return invalid("options.n_best is " + std::to_string(request.n_best()) +
                   "; it must be between 1 and the beam size " + std::to_string(o.beam_size));
  }
  const int length_limit = std::min(limits.max_decoding_length, model.max_sequence_length() - 1);
  if (request.max_length() != 0) {
    if (request.max_length() > static_cast<unsigned>(length_limit)) {
      return invalid("options.max_length is " + std::to_string(request.max_length()) +
                     ", over the limit of " + std::to_string(length_limit));
    }
    o.max_length = static_cast<int>(request.max_length());
  }
  o.max_length = std::min(o.max_length, length_limit);
  if (request.has_min_length()) {
    if (request.min_length() > static_cast<unsigned>(o.max_length)) {
      return invalid("options.min_length is " + std::to_string(request.min_length()) +
                     "; it must be at most max_length " + std::to_string(o.max_length));
    }
    o.min_length = static_cast<int>(request.min_length());
  }
  if (request.has_length_penalty()) {
    const float alpha = request.length_penalty();
    if (!std::isfinite(alpha) || alpha < 0.0f || alpha > 10.0f) {
      return invalid("options.length_penalty is " + std::to_string(alpha) +
                     "; it must be between 0 and 10");
    }
    o.length_penalty = alpha;
  }
  if (!v1::LengthPenaltyType_IsValid(request.length_penalty_type())) {
    return invalid("options.length_penalty_type " + std::to_string(request.length_penalty_type()) +
                   " is not a known type");
  }
  o.length_penalty_type = to_engine(request.length_penalty_type(), defaults.length_penalty_type);
  if (request.has_no_repeat_ngram_size()) {
    if (request.no_repeat_ngram_size() > static_cast<unsigned>(kMaxNoRepeatNgram)) {
      return invalid("options.no_repeat_ngram_size is " +
                     std::to_string(request.no_repeat_ngram_size()) + "; it must be at most " +
                     std::to_string(kMaxNoRepeatNgram));
    }
    o.no_repeat_ngram_size = static_cast<int>(request.no_repeat_ngram_size());
  }
  try {
    validate(o);
  } catch (const InvalidArgument& e) {
    return invalid("options: " + e.message());
  }
  *resolved = o;
  return RequestStatus::Ok();
}

namespace {

documents::TextFormat to_format(v1::TextFormat format) {
  switch (format) {
    case v1::TEXT_FORMAT_HTML:
      return documents::TextFormat::kHtml;
    case v1::TEXT_FORMAT_XML:
      return documents::TextFormat::kXml;
    case v1::TEXT_FORMAT_PO:
      return documents::TextFormat::kPo;
    case v1::TEXT_FORMAT_XLIFF:
      return documents::TextFormat::kXliff;
    case v1::TEXT_FORMAT_JSON:
      return documents::TextFormat::kJson;
    case v1::TEXT_FORMAT_MARKDOWN:
      return documents::TextFormat::kMarkdown;
    default:
      return documents::TextFormat::kText;
  }
}

documents::SplitSentences to_split(v1::SplitSentences split, documents::SplitSentences fallback) {
  switch (split) {
    case v1::SPLIT_SENTENCES_AUTO:
      return documents::SplitSentences::kAuto;
    case v1::SPLIT_SENTENCES_NEWLINES:
      return documents::SplitSentences::kNewlines;
    case v1::SPLIT_SENTENCES_SENTENCES:
      return documents::SplitSentences::kSentences;
    case v1::SPLIT_SENTENCES_NONE:
      return documents::SplitSentences::kNone;
    default:
      return fallback;
  }
}

RequestStatus too_many_segments(const RequestLimits& limits) {
  return invalid("the texts have more than " + std::to_string(limits.max_segments_per_request) +
                 " segments (sentences), the limit per request; split the call");
}

// Segments `text` (request text `index`) into prepared->texts.back() and its segments' ids, made
// ready as `how` says, into prepared: a segment over the input limit is cut until every part fits,
// one over what the model translates whole with the request's max_length between words
// (segment_limits).
RequestStatus prepare_text(const std::string& text, int index, const ServedModel& model,
                           const ServerOptions& options, const SourcePreparation& how,
                           PreparedRequest* prepared) {
  const std::string where = "texts[" + std::to_string(index) + "]";
  if (!is_valid_utf8(text)) return invalid(where + " is not valid UTF-8");
  // Valid UTF-8 and JSON's "\u0000", but no text holds it: read as blank it was dropped.
  if (text.find('\0') != std::string::npos) return invalid(where + " contains U+0000 (NUL)");
  const RequestLimits& limits = options.limits;
  if (static_cast<long>(text.size()) > limits.max_text_bytes) {
    return invalid(where + " has " + std::to_string(text.size()) + " bytes, over the limit of " +
                   std::to_string(limits.max_text_bytes) + " bytes per text");
  }
  PreparedText& out = prepared->texts.emplace_back();
  out.first_segment = prepared->segments();
  std::shared_ptr<documents::Document> document;
  try {
    document =
        std::make_shared<documents::Document>(documents::Document::parse(text, prepared->document));
  } catch (const documents::MarkupError& e) {
    return invalid(where + " is not a valid " +
                   documents::text_format_name(prepared->document.format) +
                   " document: " + e.what());
  } catch (const documents::CatalogError& e) {
    return invalid(where + " is not a valid " +
                   documents::text_format_name(prepared->document.format) + " file: " + e.what());
  }
  // Before any tokenizing: cutting long segments only adds more.
  if (prepared->segments() + static_cast<long>(document->segments()) >
      limits.max_segments_per_request) {
    return too_many_segments(limits);
  }
  std::vector<PreparedSource> segments;
  try {
    for (documents::SegmentedText& part : document->parts()) {
      std::vector<PreparedSource> ready = rpt::prepare_segments(
          part, segment_limits(*model.model, model.max_input_length, prepared->options.max_length),
          [&](const std::string& segment) { return prepare_source(*model.model, segment, how); },
          prepared->document.segmentation.keep_together);
      std::move(ready.begin(), ready.end(), std::back_inserter(segments));
    }
  } catch (const InvalidArgument& e) {
    return invalid(where + ": " + e.message());
  } catch (const std::exception& e) {
    return invalid(where + " could not be tokenized: " + client_message(e));
  }
  if (prepared->segments() + static_cast<long>(segments.size()) > limits.max_segments_per_request) {
    return too_many_segments(limits);
  }
  for (const documents::SegmentedText& part : document->parts()) {
    prepared->segment_texts.insert(prepared->segment_texts.end(), part.segments.begin(),
                                   part.segments.end());
  }
  for (PreparedSource& segment : segments) {
    prepared->source_ids.push_back(std::move(segment.ids));
    prepared->segment_owner.push_back(index);
    if (how.protector != nullptr) prepared->spans.push_back(std::move(segment.spans));
  }
  out.document = std::move(document);
  return RequestStatus::Ok();
}

}  // namespace

RequestStatus prepare_request(const v1::TranslateRequest& request, const ServedModel& model,
                              const ChosenPair& pair, const ServerOptions& options,
                              PreparedRequest* prepared) {
  const RequestLimits& limits = options.limits;
  const std::vector<LanguagePair>& pairs = model.model->language_pairs();
  if (pair.index >= pairs.size()) {
    return {StatusCode::kInternal, "language pair " + std::to_string(pair.index) + " of model " +
                                       model.name + " does not exist"};
  }
  const std::string& target_language = pairs[pair.index].target;
  prepared->pair = pair;
  const int count = request.texts_size();
  if (count == 0) return invalid("texts is empty; send at least one text");
  if (count > limits.max_texts_per_request) {
    return invalid("texts has " + std::to_string(count) + " entries, over the limit of " +
                   std::to_string(limits.max_texts_per_request) + " per request");
  }
  RequestStatus resolved = resolve_options(request.options(), options.default_decoding, limits,
                                           *model.model, &prepared->options);
  if (!resolved.ok()) return resolved;
  if (!v1::SplitSentences_IsValid(request.options().split_sentences())) {
    return invalid("options.split_sentences " +
                   std::to_string(request.options().split_sentences()) + " is not a known mode");
  }
  const v1::DecodingOptions& given = request.options();
  if (!v1::TextFormat_IsValid(given.format())) {
    return invalid("options.format " + std::to_string(given.format()) + " is not a known format");
  }
  if (given.ignore_tags_size() > kMaxIgnoredTags) {
    return invalid("options.ignore_tags has " + std::to_string(given.ignore_tags_size()) +
                   " names, over the limit of " + std::to_string(kMaxIgnoredTags));
  }
  prepared->document.format = to_format(given.format());
  prepared->document.ignore_tags.assign(given.ignore_tags().begin(), given.ignore_tags().end());
  prepared->document.target_language = target_language;
  if (documents::is_catalog_format(prepared->document.format)) {
    if (target_language.empty()) {
      return invalid("options.format " + v1::TextFormat_Name(given.format()) +
                     ": the model names no target language to fill the file in");
    }
    documents::CatalogOptions& catalog = prepared->document.catalog;
    catalog.target_language = target_language;
    catalog.translate_fuzzy = given.translate_fuzzy();
    catalog.mark_for_review = !given.has_mark_for_review() || given.mark_for_review();
    catalog.max_bytes = static_cast<std::size_t>(limits.max_text_bytes);
  }
  prepared->document.segmentation.split =
      to_split(given.split_sentences(), options.text.split_sentences);
  prepared->document.segmentation.language =
      pair.source_language.empty() ? "en" : pair.source_language;
  prepared->document.segmentation.target_language = target_language;
  prepared->return_scores = request.options().return_scores();
  prepared->return_tokens = request.options().return_tokens();
  prepared->use_cache = !request.options().has_use_cache() || request.options().use_cache();

  RequestStatus glossary = prepare_glossary(request, model, prepared);
  if (!glossary.ok()) return glossary;

  if (!prepared->glossary.empty()) {  // a term is never cut by a sentence end
    prepared->document.segmentation.keep_together = glossary_terms_of(prepared->glossary);
  }
  prepared->protect_spans = model.span_protector && (!request.options().has_protect_spans() ||
                                                     request.options().protect_spans());
  // Without protection markup is text the model reads, at a segment's edges too.
  prepared->document.segmentation.edge_markup_is_layout = prepared->protect_spans;
  const bool rewrite = prepared->protect_spans || !prepared->glossary.empty();
  const SourcePreparation how{.language_pair = pair.index,
                              .protector = rewrite ? model.span_protector.get() : nullptr,
                              .spans = {.enabled = prepared->protect_spans},
                              .glossary = prepared->glossary};
  prepared->texts.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    RequestStatus text = prepare_text(request.texts(i), i, model, options, how, prepared);
    if (!text.ok()) return text;
  }
  return RequestStatus::Ok();
}

}  // namespace rpt::server
