#include "flags/shared_flags.h"

#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

namespace rpt::flags {
namespace {

// A flag naming one of `names`, parsed by `parse` (the enum's own parser) into `value`.
template <typename Enum, typename Parse>
CLI::Option* add_choice(CLI::App& app, const std::string& name, Enum& value,
                        const std::vector<std::string>& names, std::string_view default_name,
                        Parse parse, const std::string& help) {
  return app
      .add_option_function<std::string>(
          name, [&value, parse](const std::string& text) { value = parse(text); }, help)
      ->check(CLI::IsMember(names))
      ->default_str(std::string(default_name));
}

bool parse_on_off(std::string_view text) { return text == "on"; }
bool parse_gpu_gemm(std::string_view text) { return text == "batch-invariant"; }

}  // namespace

ComputeOptions ComputeFlags::compute_options(kernels::Precision model_precision,
                                             std::size_t memory_limit_bytes) const {
  return {.device = device,
          .precision = model_precision,
          .device_index = device_index,
          .memory_limit_bytes = memory_limit_bytes,
          .batch_invariant = batch_invariant,
          .gpu_graphs = gpu_graphs,
          .gpu_profile = gpu_profile,
          .gpu_attention = gpu_attention};
}

void add_compute_flags(CLI::App& app, ComputeFlags& flags, const std::string& memory_limit_help) {
  add_choice(
      app, "--device", flags.device, {"cpu", "cuda"}, device_name(flags.device),
      [](std::string_view name) { return parse_device(std::string(name)); },
      "Where models compute: cpu or cuda");
  add_choice(
      app, "--compute-type", flags.precision, {"float32", "float16", "bfloat16", "int8"},
      kernels::precision_name(flags.precision),
      [](std::string_view name) { return parse_precision(std::string(name)); },
      "Precision: on the CPU float32 or int8 (linear layers in int8, quantized at load), "
      "on the GPU float32, float16 or bfloat16");
  app.add_option("--device-index", flags.device_index, "CUDA device to use")
      ->check(CLI::Range(0, 64))
      ->capture_default_str();
  app.add_option("--device-memory-limit", flags.memory_limit_mib,
                 "MiB of memory each model may hold: on a GPU weights, caches and workspaces, on "
                 "the CPU the decoding state (encoder memory, caches). Sentences that do not fit "
                 "together are retried in smaller groups; one that does not fit alone is "
                 "refused. 0: no limit but the device's. " +
                     memory_limit_help)
      ->check(CLI::Range(0.0, 1e9));
  add_choice(app, "--gpu-gemm", flags.batch_invariant, {"batch-invariant", "fastest"},
             flags.batch_invariant ? "batch-invariant" : "fastest", parse_gpu_gemm,
             "GPU GEMMs: batch-invariant (a sentence's translation does not depend on what it "
             "is batched with: one frozen cuBLASLt algorithm per weight shape) or fastest "
             "(cuBLAS's choice per call)");
  add_choice(app, "--gpu-graphs", flags.gpu_graphs, {"on", "off"}, flags.gpu_graphs ? "on" : "off",
             parse_on_off,
             "GPU decoder steps replayed as CUDA graphs, one launch a step (on) or every kernel "
             "launched as it comes (off); the translations are the same");
  add_choice(
      app, "--gpu-attention", flags.gpu_attention, {"key-split", "lane-groups"},
      kernels::cuda_attention_kernel_name(flags.gpu_attention),
      [](std::string_view name) { return parse_gpu_attention(std::string(name)); },
      "GPU fused attention: key-split (a block of four warps per query row and head, a lane "
      "per key) or lane-groups (a warp per row and head, a group of lanes per key, coalesced "
      "loads: for decoding's many short rows); the same computation, the last bits may differ");
  app.add_option("--threads", flags.threads, "CPU threads of each decoder's ops (0: all)")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
}

void add_decoding_flags(CLI::App& app, DecodingOptions& decoding) {
  app.add_option("--beam-size", decoding.beam_size, "Beam size (1: greedy)")
      ->check(CLI::Range(1, kMaxBeamSize))
      ->capture_default_str();
  app.add_option("--n-best", decoding.n_best, "Hypotheses per text, <= --beam-size")
      ->check(CLI::Range(1, kMaxBeamSize))
      ->capture_default_str();
  app.add_option("--max-length", decoding.max_length, "Maximum generated tokens")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  app.add_option("--min-length", decoding.min_length, "Minimum generated tokens")
      ->check(CLI::Range(0, 1 << 20))
      ->capture_default_str();
  app.add_option("--length-penalty", decoding.length_penalty, "Length penalty alpha")
      ->check(CLI::Range(0.0, 10.0))
      ->capture_default_str();
  add_choice(app, "--length-penalty-type", decoding.length_penalty_type,
             {"average", "gnmt", "none"}, length_penalty_type_name(decoding.length_penalty_type),
             parse_length_penalty_type, "average: len^alpha; gnmt: ((5+len)/6)^alpha; none");
  app.add_option("--no-repeat-ngram-size", decoding.no_repeat_ngram_size,
                 "No hypothesis repeats a sequence of this many target tokens (0: off)")
      ->check(CLI::Range(0, kMaxNoRepeatNgram))
      ->capture_default_str();
}

void add_text_flags(CLI::App& app, TextFlags& flags) {
  add_choice(
      app, "--split-sentences", flags.split_sentences, {"auto", "newlines", "sentences", "none"},
      documents::split_sentences_name(flags.split_sentences), documents::parse_split_sentences,
      "How texts are cut into segments: auto (sentences and line breaks), newlines (each "
      "line one segment), sentences (sentences and blank lines), none (each text one "
      "segment); the layout around segments (spaces, list markers, symbols alone) comes "
      "back as it was, blank lines as blank lines");
  add_choice(app, "--glossary-method", flags.glossary_method, {"mask", "phrase"},
             glossary_method_name(flags.glossary_method), parse_glossary_method,
             "How glossary terms are enforced: mask (a placeholder the model copies, the target "
             "put in after) or phrase (the model reads the term, the target text is required); "
             "docs/glossaries.md compares them");
}

void add_batching_flags(CLI::App& app, int& max_input_length, int& admission_group) {
  app.add_option("--max-input-length", max_input_length,
                 "Longest segment the model reads, in source tokens of its own (the prefix of a "
                 "multilingual model's language pair and the eos aside); a longer one is cut at "
                 "a clause or a space (docs/documents.md)")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  app.add_option("--admission-group", admission_group,
                 "Waiting segments join a running batch once this many can (or all that wait "
                 "can): fewer, larger encoder calls, worth it where a call's fixed cost dominates "
                 "(a GPU); the output is the same. 1: at every free row; 0: by device (8 on a "
                 "GPU, 1 on the CPU, as measured)")
      ->check(CLI::Range(0, 1 << 16))
      ->capture_default_str();
}

}  // namespace rpt::flags
