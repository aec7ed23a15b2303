#include "server/request_validation.h"

#include <cmath>
#include <string>

#include "engine/errors.h"
#include "common/text_hygiene.h"

namespace rpt::server {
namespace {

RequestStatus invalid(std::string message) {
  return {StatusCode::kInvalidArgument, std::move(message)};
}

LengthPenaltyType to_engine(v1::LengthPenaltyType type, LengthPenaltyType fallback) {
  switch (type) {
    case v1::LENGTH_PENALTY_TYPE_AVERAGE: return LengthPenaltyType::kAverage;
    case v1::LENGTH_PENALTY_TYPE_GNMT: return LengthPenaltyType::kGnmt;
    case v1::LENGTH_PENALTY_TYPE_NONE: return LengthPenaltyType::kNone;
    default: return fallback;
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
    const auto found = model.glossaries.find(request.glossary_name());
    if (found == model.glossaries.end()) {
      std::string loaded;
      for (const auto& [name, glossary] : model.glossaries) {
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
    return invalid("options.length_penalty_type " +
                   std::to_string(request.length_penalty_type()) + " is not a known type");
  }
  o.length_penalty_type = to_engine(request.length_penalty_type(), defaults.length_penalty_type);
  try {
    validate(o);
  } catch (const InvalidArgument& e) {
    return invalid("options: " + e.message());
  }
  *resolved = o;
  return RequestStatus::Ok();
}

RequestStatus prepare_request(const v1::TranslateRequest& request, const ServedModel& model,
                              const RequestLimits& limits, const DecodingOptions& defaults,
                              PreparedRequest* prepared) {
  const int count = request.texts_size();
  if (count == 0) return invalid("texts is empty; send at least one text");
  if (count > limits.max_texts_per_request) {
    return invalid("texts has " + std::to_string(count) + " entries, over the limit of " +
                   std::to_string(limits.max_texts_per_request) + " per request");
  }
  RequestStatus options = resolve_options(request.options(), defaults, limits, *model.model,
                                          &prepared->options);
  if (!options.ok()) return options;
  prepared->return_scores = request.options().return_scores();
  prepared->return_tokens = request.options().return_tokens();
  prepared->use_cache =
      !request.options().has_use_cache() || request.options().use_cache();

  RequestStatus glossary = prepare_glossary(request, model, prepared);
  if (!glossary.ok()) return glossary;

  const Model& m = *model.model;
  prepared->source_ids.assign(static_cast<std::size_t>(count), {});
  const bool protect =
      model.span_protector &&
      (!request.options().has_protect_spans() || request.options().protect_spans());
  prepared->protect_spans = protect;
  const bool rewrite = protect || !prepared->glossary.empty();
  if (rewrite) prepared->spans.assign(static_cast<std::size_t>(count), nullptr);
  for (int i = 0; i < count; ++i) {
    const std::string& text = request.texts(i);
    const std::string where = "texts[" + std::to_string(i) + "]";
    if (!is_valid_utf8(text)) return invalid(where + " is not valid UTF-8");
    // Before the tokenizer, which would turn some of these into pieces and invent a sentence.
    if (is_blank_text(text)) {
      return invalid(where + " is empty or blank (only whitespace and control characters)");
    }
    // Raw bytes bound the tokenizer's work before the token limit is known.
    const std::size_t byte_limit = static_cast<std::size_t>(model.max_input_length) * 64;
    if (text.size() > byte_limit) {
      return invalid(where + " has " + std::to_string(text.size()) +
                     " bytes, over the input limit of " + std::to_string(model.max_input_length) +
                     " tokens");
    }
    std::vector<std::string> pieces;
    try {
      if (rewrite) {
        ProtectedSource spans =
            model.span_protector->protect(text, {.enabled = protect}, prepared->glossary);
        if (spans.constraints) {
          pieces = m.source_tokenizer().encode(spans.text);
          prepared->spans[static_cast<std::size_t>(i)] =
              std::make_shared<const ProtectedSource>(std::move(spans));
        }
      }
      if (pieces.empty()) pieces = m.source_tokenizer().encode(text);
    } catch (const std::exception& e) {
      return invalid(where + " could not be tokenized: " + e.what());
    }
    if (pieces.empty()) return invalid(where + " is empty or only whitespace");
    if (static_cast<int>(pieces.size()) > model.max_input_length) {
      return invalid(where + " has " + std::to_string(pieces.size()) +
                     " tokens, over the input limit of " +
                     std::to_string(model.max_input_length) + " tokens");
    }
    auto& ids = prepared->source_ids[static_cast<std::size_t>(i)];
    ids.reserve(pieces.size());
    for (const std::string& piece : pieces) ids.push_back(m.source_vocabulary().to_id(piece));
  }
  return RequestStatus::Ok();
}

}  // namespace rpt::server
