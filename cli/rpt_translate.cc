// rpt-translate: offline translation, source lines on stdin, translations on stdout, streamed in
// input order; --format markdown|html|xml|po|xliff|json translates one document or localization
// file. The options and what each does: docs/offline.md "rpt-translate".
//
//   rpt-translate --model models/en-de [--beam-size 4] [--n-best 1] [--with-scores] < in > out
//   rpt-translate --model models/en-de --format po --input app.pot --output de.po
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "engine/errors.h"
#include "common/process_memory.h"
#include "engine/text_segments.h"
#include "engine/translator.h"
#include "kernels/cpu_kernels.h"
#include "kernels/parallel.h"
#include "cli/document_translation.h"
#include "cli/line_reader.h"
#include "cli/progress_line.h"
#include "cli/stream_translation.h"
#include "flags/shared_flags.h"

namespace {

struct CliOptions {
  std::string model;
  rpt::flags::ComputeFlags compute;
  rpt::flags::TextFlags text;
  int inter_threads = 1;
  int batch_size = 32;
  int max_input_length = 1024;
  int admission_group = rpt::kAdmissionGroupByDevice;
  bool with_scores = false;
  bool verbose = false;
  bool quiet = false;
  bool protect_spans = true;
  bool accelerators = true;
  bool span_masking = true;
  std::string glossary;
  std::string language;         // empty: the source language of the model's pair
  std::string input;            // --format other than text: empty or "-": stdin
  std::string output;           // likewise: empty or "-": stdout
  std::string target_language;  // empty: the target language of the model's pair
  bool translate_fuzzy = false;
  bool mark_for_review = true;
  std::string format = "text";
  std::vector<std::string> ignore_tags;  // --format html|xml: elements left untouched
  rpt::DecodingOptions decoding;
};

// The model's language pair the input is translated in: with several, the one --language and
// --target-language pick (neither: the first, the model's default direction); with one, that
// one whatever they say (they then name only the sentence rules and a catalogue's language).
std::size_t language_pair(const CliOptions& cli, const rpt::Model& model) {
  const std::vector<rpt::LanguagePair>& pairs = model.language_pairs();
  if (pairs.size() == 1 || (cli.language.empty() && cli.target_language.empty())) return 0;
  try {
    return rpt::pick_language_pair(pairs, {cli.language, cli.target_language});
  } catch (const rpt::InvalidArgument& e) {
    throw std::runtime_error(e.message() + " (--language, --target-language)");
  }
}

// How the input is cut: --split-sentences, the sentence rules of --language (else the source
// language of the translator's pair), the glossary's terms never cut (`glossary` outlives the
// options).
rpt::documents::SegmentationOptions segmentation(const CliOptions& cli,
                                                 const rpt::Translator& translator,
                                                 const rpt::GlossaryUse& glossary) {
  rpt::documents::SegmentationOptions options;
  options.split = cli.text.split_sentences;
  const rpt::LanguagePair& pair =
      translator.model().language_pairs()[translator.options().language_pair];
  const std::string source = pair.reads_any_source() ? std::string() : pair.source;
  options.language = !cli.language.empty() ? cli.language : source.empty() ? "en" : source;
  options.target_language = !cli.target_language.empty() ? cli.target_language : pair.target;
  if (!glossary.empty()) options.keep_together = rpt::glossary_terms_of(glossary);
  options.edge_markup_is_layout = cli.protect_spans;  // else markup is text the model reads
  return options;
}

// Why the options cannot translate a document, or empty.
std::string document_option_conflict(const CliOptions& cli) {
  if (cli.format == "text") {
    if (cli.input.empty() && cli.output.empty()) return {};
    return "--input and --output go with --format markdown|html|xml|po|xliff|json (text streams "
           "stdin)";
  }
  if (cli.decoding.n_best > 1) {
    return "--n-best " + std::to_string(cli.decoding.n_best) +
           " needs --format text: a document is translated once";
  }
  if (cli.with_scores) {
    return "--with-scores needs --format text (with a document, --verbose prints its score)";
  }
  return {};
}

std::string read_all(std::FILE* file) {
  std::string text;
  char buffer[1 << 16];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, file)) > 0;) text.append(buffer, n);
  if (std::ferror(file)) throw std::runtime_error("cannot read the input");
  return text;
}

// --input (else stdin), whole.
std::string read_input(const std::string& path) {
  if (path.empty() || path == "-") return read_all(stdin);
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) throw std::runtime_error("cannot open " + path);
  std::string text = read_all(file);
  std::fclose(file);
  return text;
}

// --gpu-profile: each part's GPU milliseconds per step, largest first, then what the host adds:
// the backend's step as the host saw it, and the beam search around it.
void print_step_profile(const rpt::tools::StageTimes& t) {
  if (t.profile.empty() || t.steps == 0) return;
  constexpr const char* kWall = "step (host wall)";
  std::vector<std::pair<std::string, rpt::StepProfilePart>> parts;
  double gpu_seconds = 0;
  for (const auto& [name, part] : t.profile) {
    if (name == kWall) continue;
    parts.emplace_back(name, part);
    gpu_seconds += part.seconds;
  }
  std::sort(parts.begin(), parts.end(),
            [](const auto& a, const auto& b) { return a.second.seconds > b.second.seconds; });
  const double per_step = 1e3 / static_cast<double>(t.steps);
  std::string line;
  for (const auto& [name, part] : parts) {
    char text[256];
    std::snprintf(text, sizeof(text), ", %s %.3f ms (%.0f%%, %.1f calls)", name.c_str(),
                  part.seconds * per_step,
                  gpu_seconds > 0 ? 100.0 * part.seconds / gpu_seconds : 0.0,
                  static_cast<double>(part.calls) / static_cast<double>(t.steps));
    line += text;
  }
  const auto wall = t.profile.find(kWall);
  const double wall_seconds = wall != t.profile.end() ? wall->second.seconds : 0.0;
  std::fprintf(stderr,
               "rpt-translate: GPU step profile, per step (%ld eager steps): GPU %.3f ms%s\n"
               "rpt-translate: GPU step profile, host: the backend's step %.3f ms wall (GPU idle "
               "or waiting on the host %.3f ms), beam search around it %.3f ms\n",
               t.steps, gpu_seconds * per_step, line.c_str(), wall_seconds * per_step,
               (wall_seconds - gpu_seconds) * per_step, (t.step_seconds - wall_seconds) * per_step);
}

// To --output (else stdout).
void write_output(const std::string& path, const std::string& text) {
  const bool to_stdout = path.empty() || path == "-";
  std::FILE* file = to_stdout ? stdout : std::fopen(path.c_str(), "wb");
  if (file == nullptr) throw std::runtime_error("cannot write " + path);
  const bool written =
      std::fwrite(text.data(), 1, text.size(), file) == text.size() && std::fflush(file) == 0;
  if (!to_stdout && std::fclose(file) != 0) throw std::runtime_error("cannot write " + path);
  if (!written) throw std::runtime_error("cannot write " + (to_stdout ? "stdout" : path));
}

rpt::tools::DocumentTranslationOptions document_translation_options(
    const CliOptions& cli, const rpt::Translator& translator, const rpt::GlossaryUse& glossary) {
  rpt::tools::DocumentTranslationOptions options;
  options.document.segmentation = segmentation(cli, translator, glossary);
  options.document.ignore_tags = cli.ignore_tags;
  options.decoding = cli.decoding;
  options.spans = {
      .enabled = cli.protect_spans, .accelerators = cli.accelerators, .mask = cli.span_masking};
  options.glossary = glossary;
  return options;
}

// --format markdown|html|xml|po|xliff|json: the input as one document, its translation to the
// output.
int translate_whole_document(const CliOptions& cli, const rpt::Translator& translator,
                             const rpt::GlossaryUse& glossary) {
  const auto start = std::chrono::steady_clock::now();
  const std::string input = read_input(cli.input);
  rpt::tools::DocumentTranslationOptions options =
      document_translation_options(cli, translator, glossary);
  options.document.format = rpt::documents::parse_text_format(cli.format);
  options.document.target_language =
      !cli.target_language.empty()
          ? cli.target_language
          : translator.model().language_pairs()[translator.options().language_pair].target;
  if (rpt::documents::is_catalog_format(options.document.format)) {
    rpt::documents::CatalogOptions& catalog = options.document.catalog;
    catalog.target_language = options.document.target_language;
    if (catalog.target_language.empty()) {
      throw std::runtime_error("the model names no target language: give --target-language");
    }
    catalog.translate_fuzzy = cli.translate_fuzzy;
    catalog.mark_for_review = cli.mark_for_review;
  }
  const rpt::tools::DocumentTranslation out =
      rpt::tools::translate_document(translator, options, input);
  write_output(cli.output, out.text);
  if (!cli.verbose) return 0;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(stderr,
               "rpt-translate: %s document of %zu bytes: %zu text units, %zu segments, %d "
               "units kept as source (their tags did not fit), score %.6f\n",
               cli.format.c_str(), input.size(), out.parts, out.segments, out.units_kept_as_source,
               static_cast<double>(out.score));
  if (const auto& stats = out.catalog) {
    std::fprintf(stderr,
                 "rpt-translate: %d entries: %d translated now (%d with plurals), %d already "
                 "translated, %d marked not to translate\n",
                 stats->entries, stats->to_translate, stats->plural_entries,
                 stats->already_translated, stats->not_translatable);
  }
  std::fprintf(stderr,
               "rpt-translate: %d source tokens, %zu target tokens, %d protected spans (all "
               "kept: %s); %s, beam %d, batch %d\n",
               out.source_tokens, out.target_tokens, out.protected_spans,
               out.spans_kept ? "yes" : "no", translator.engine().device_description().c_str(),
               cli.decoding.beam_size, cli.batch_size);
  for (const rpt::GlossaryTermResult& term : out.glossary_terms) {
    std::fprintf(stderr, "rpt-translate: glossary %s -> %s: %d matches, %s\n", term.source.c_str(),
                 term.target.c_str(), term.matches, term.kept ? "kept" : "missed");
  }
  const rpt::tools::DocumentTimes& t = out.times;
  std::fprintf(stderr,
               "rpt-translate: time %.3f s: parse %.3f s, prepare %.3f s, translate %.3f s, "
               "render %.3f s\n",
               seconds, t.parse, t.prepare, t.translate, t.render);
  return 0;
}

// --verbose: the time from the start of loading to a translator ready, and the model's phases
// (bench/load_time.py reads this line).
void print_load_time(std::chrono::steady_clock::time_point start, const rpt::LoadPhases& model) {
  const double ready =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(
      stderr,
      "rpt-translate: load %.3f s: model %.3f s (map %.3f, checksum %.3f, convert %.3f, "
      "quantize %.3f, pack %.3f, other %.3f), engine and translator %.3f s, %d CPU "
      "threads\n",
      ready, model.total, model.map, model.checksum, model.convert, model.quantize, model.pack,
      model.total - model.map - model.checksum - model.convert - model.quantize - model.pack,
      ready - model.total, rpt::kernels::cpu_threads());
}

int run(const CliOptions& cli) {
  const auto load_start = std::chrono::steady_clock::now();
  rpt::kernels::set_cpu_threads(cli.compute.threads);
  const rpt::kernels::Precision precision = cli.compute.precision;
  std::shared_ptr<const rpt::Model> loaded =
      rpt::Model::load(cli.model, {.int8 = precision == rpt::kernels::Precision::kInt8,
                                   .cpu_layout = cli.compute.device == rpt::Device::kCpu});
  const rpt::LoadPhases phases = loaded->load_phases();
  // The engine holds the only reference to the model: a GPU engine frees its host weights.
  const auto engine = rpt::Engine::create(
      std::move(loaded),
      cli.compute.compute_options(
          precision, static_cast<std::size_t>(cli.compute.memory_limit_mib * 1048576.0)));
  const rpt::Model& model = engine->model();
  const rpt::Translator translator(engine, {.max_batch_size = cli.batch_size,
                                            .max_input_length = cli.max_input_length,
                                            .admission_group = cli.admission_group,
                                            .language_pair = language_pair(cli, model)});
  if (cli.verbose) print_load_time(load_start, phases);

  std::optional<rpt::Glossary> glossary;
  rpt::GlossaryUse glossary_use{.glossaries = {}, .method = cli.text.glossary_method};
  if (!cli.glossary.empty()) {
    glossary.emplace(rpt::Glossary::load(cli.glossary));
    translator.span_protector().check_glossary(*glossary, cli.glossary);
    glossary_use.glossaries.push_back(&*glossary);
  }

  if (cli.format != "text") return translate_whole_document(cli, translator, glossary_use);

  const auto start = std::chrono::steady_clock::now();
  rpt::tools::LineReader input(STDIN_FILENO);
  rpt::tools::StreamTotals totals;
  {
    rpt::tools::ProgressLine progress("rpt-translate", "segments", !cli.quiet);
    totals = rpt::tools::translate_stream(
        translator,
        {.decoding = cli.decoding,
         .segmentation = segmentation(cli, translator, glossary_use),
         .spans = {.enabled = cli.protect_spans,
                   .accelerators = cli.accelerators,
                   .mask = cli.span_masking},
         .glossary = glossary_use,
         .decoders = cli.inter_threads},
        input, progress, [&cli](const rpt::TranslationResult& result, bool newline) {
          for (std::size_t i = 0; i < result.hypotheses.size(); ++i) {
            const auto& hypothesis = result.hypotheses[i];
            if (cli.with_scores) std::printf("%.6f\t", static_cast<double>(hypothesis.score));
            const bool last = i + 1 == result.hypotheses.size();
            std::printf(last && !newline ? "%s" : "%s\n", hypothesis.text.c_str());
          }
          std::fflush(stdout);  // a reader of the pipe gets each translation now
        });
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (cli.verbose) {
    const auto sentences = static_cast<double>(totals.sentences);
    std::fprintf(stderr,
                 "rpt-translate: %ld lines, %ld sentences, %ld target tokens in %.3f s: %.1f "
                 "sentences/s, "
                 "%.1f target tokens/s (beam %d, batch %d, %s %s, %d CPU threads, %d "
                 "decoders)\n",
                 totals.lines, totals.sentences, totals.target_tokens, seconds, sentences / seconds,
                 static_cast<double>(totals.target_tokens) / seconds, cli.decoding.beam_size,
                 cli.batch_size, translator.engine().device_description().c_str(),
                 rpt::kernels::precision_name(cli.compute.precision).data(),
                 rpt::kernels::cpu_threads(), cli.inter_threads);
    if (translator.engine().device_description() == "cpu") {
      std::fprintf(stderr, "rpt-translate: CPU kernels: %s\n",
                   rpt::kernels::cpu_kernels().summary().c_str());
    }
    const rpt::tools::StageTimes& t = totals.times;
    std::fprintf(
        stderr,
        "rpt-translate: time: preparing %.3f s, encoding %.3f s (%ld calls, %.1f "
        "sentences each), decoding %.3f s (%ld steps, %.1f rows each), results %.3f s, "
        "output %.3f s\n",
        t.prepare_seconds, t.encode_seconds, t.encode_calls,
        t.encode_calls > 0
            ? static_cast<double>(t.encoded_sentences) / static_cast<double>(t.encode_calls)
            : 0.0,
        t.step_seconds, t.steps,
        t.steps > 0 ? static_cast<double>(t.step_rows) / static_cast<double>(t.steps) : 0.0,
        t.results_seconds, t.output_seconds);
    if (t.graphs.eager + t.graphs.replayed > 0) {
      std::fprintf(stderr,
                   "rpt-translate: GPU steps: %llu replayed as CUDA graphs (%llu captured), %llu "
                   "eager\n",
                   static_cast<unsigned long long>(t.graphs.replayed),
                   static_cast<unsigned long long>(t.graphs.captured),
                   static_cast<unsigned long long>(t.graphs.eager));
    }
    print_step_profile(t);
    std::fprintf(stderr, "rpt-translate: %ld protected spans, %ld translations missing some\n",
                 totals.protected_spans, totals.spans_lost);
    if (!cli.glossary.empty()) {
      std::fprintf(stderr, "rpt-translate: %ld glossary terms matched, %ld missed\n",
                   totals.glossary_terms, totals.glossary_missed);
    }
    const std::size_t peak = translator.engine().peak_device_memory_bytes();
    if (peak > 0) {
      std::fprintf(stderr, "rpt-translate: peak engine memory %.1f MiB\n",
                   static_cast<double>(peak) / 1048576.0);
    }
    const std::string device_memory = translator.engine().device_memory_report();
    if (!device_memory.empty()) std::fprintf(stderr, "rpt-translate: %s\n", device_memory.c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"rpt-translate: translate stdin lines to stdout with an rpt model"};
  CliOptions cli;
  app.add_option("--model", cli.model, "Model directory (docs/model-format.md)")->required();
  rpt::flags::add_decoding_flags(app, cli.decoding);
  app.add_option("--batch-size", cli.batch_size, "Sentences decoded together")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  rpt::flags::add_compute_flags(app, cli.compute, "Default: 0");
  app.add_option("--inter-threads", cli.inter_threads,
                 "Batch decoders, each on its own thread and taking the next lines as its batch "
                 "has room (throughput on several cores: e.g. --inter-threads 2 --threads 1); "
                 "the output is the same")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  rpt::flags::add_text_flags(app, cli.text);
  rpt::flags::add_batching_flags(app, cli.max_input_length, cli.admission_group);
  app.add_option("--language", cli.language,
                 "Source language: its sentence rules cut lines and, with --target-language, it "
                 "picks a multilingual model's language pair (default: the model's)");
  app.add_option("--format", cli.format,
                 "text: each stdin line translated on its own; markdown: all of stdin one "
                 "text, its code blocks (fenced, indented) kept; html, xml: all of stdin one "
                 "document (or fragment) translated with its markup kept, written to stdout as "
                 "it comes back, nothing added; po, xliff, json: a gettext catalogue, XLIFF "
                 "file or JSON resource file with its missing translations filled in (--n-best 1 "
                 "only, no --with-scores, "
                 "--inter-threads unused; a file that cannot be parsed exits 1)")
      ->check(CLI::IsMember({"text", "html", "xml", "po", "xliff", "json", "markdown"}))
      ->capture_default_str();
  app.add_option("--ignore-tags", cli.ignore_tags,
                 "--format html|xml: elements whose content is left untouched, comma-separated "
                 "(besides HTML's script, style, code, pre, ...; docs/documents-markup.md)")
      ->delimiter(',');
  app.add_option("--input,-i", cli.input,
                 "--format other than text: the file to translate (default: stdin)");
  app.add_option("--output,-o", cli.output,
                 "--format other than text: where its translation goes (default: stdout)");
  app.add_option("--target-language", cli.target_language,
                 "The language to translate into: picks a multilingual model's language pair "
                 "(default: its first; docs/model-format.md), --format po|xliff|json's header and "
                 "plural forms, and --format html|xml's root lang (default: the model's target "
                 "language)");
  app.add_flag("--translate-fuzzy", cli.translate_fuzzy,
               "--format po: retranslate fuzzy entries too (their msgstr replaced)");
  app.add_flag("--fuzzy,!--no-fuzzy", cli.mark_for_review,
               "--format po|xliff: mark machine translations for review: #, fuzzy (XLIFF 1.2 "
               "state needs-review-translation, 2.0 initial); --no-fuzzy: translated "
               "(default: on)");
  app.add_flag("--with-scores", cli.with_scores,
               "Prefix each line with its score and a tab (--format text only)");
  app.add_flag("--verbose", cli.verbose,
               "Print throughput on stderr (a document: units, segments, units kept as source, "
               "score, time)");
  app.add_flag("--gpu-profile", cli.compute.gpu_profile,
               "With --verbose: where the GPU decoder steps' time goes, op by op (CUDA events; "
               "steps run without graphs, so slower)");
  app.add_flag("--quiet", cli.quiet, "No progress line on stderr (shown only on a terminal)");
  app.add_flag("--protect-spans,!--no-protect-spans", cli.protect_spans,
               "Keep placeholders, tags, entities and escapes verbatim (default: on; "
               "docs/protected-spans.md)");
  app.add_flag("--accelerators,!--no-accelerators", cli.accelerators,
               "Move keyboard accelerator markers (&File, _Open) onto the translation "
               "(default: on)");
  app.add_flag("--span-masking,!--no-span-masking", cli.span_masking,
               "Mask spans that are not one piece of their own by placeholder pieces the model "
               "knows (default: on); off: constrain their own pieces");
  app.add_option("--glossary", cli.glossary,
                 "Glossary TSV (source<TAB>target a line, # comments) enforced in every "
                 "translation (docs/glossaries.md)")
      ->check(CLI::ExistingFile);
  CLI11_PARSE(app, argc, argv);
  rpt::keep_freed_memory_for_reuse();
  if (const std::string conflict = document_option_conflict(cli); !conflict.empty()) {
    std::cerr << "rpt-translate: " << conflict << "\n";
    return 1;
  }

  try {
    return run(cli);
  } catch (const rpt::Error& error) {
    std::cerr << "rpt-translate: " << error.message() << "\n";
    return 1;
  } catch (const std::exception& error) {
    std::cerr << "rpt-translate: " << error.what() << "\n";
    return 1;
  }
}
