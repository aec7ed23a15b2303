// rpt-translate: offline translation. Source lines on stdin, translations on stdout.
//
//   rpt-translate --model models/en-de [--beam-size 4] [--n-best 1] [--with-scores] < in > out
//
// With --n-best N > 1 every source line yields N output lines, best first. --with-scores
// prefixes each output line with its score and a tab. --verbose prints throughput on stderr.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "engine/errors.h"
#include "engine/translator.h"
#include "kernels/gemm.h"

namespace {

struct CliOptions {
  std::string model;
  std::string device = "cpu";
  int threads = 0;
  int batch_size = 32;
  int max_input_length = 1024;
  bool with_scores = false;
  bool verbose = false;
  std::string length_penalty_type = "average";
  rpt::DecodingOptions decoding;
};

rpt::LengthPenaltyType parse_penalty_type(const std::string& name) {
  if (name == "average") return rpt::LengthPenaltyType::kAverage;
  if (name == "gnmt") return rpt::LengthPenaltyType::kGnmt;
  return rpt::LengthPenaltyType::kNone;
}

int run(const CliOptions& cli) {
  if (cli.device != "cpu") {
    std::cerr << "rpt-translate: device '" << cli.device
              << "' is not available in this build (the CUDA engine is not built yet); use "
                 "--device cpu\n";
    return 2;
  }
  rpt::kernels::set_cpu_blas_threads(cli.threads);
  const auto model = rpt::Model::load(cli.model);
  const rpt::Translator translator(
      model, {.max_batch_size = cli.batch_size, .max_input_length = cli.max_input_length});

  std::vector<std::string> lines;
  for (std::string line; std::getline(std::cin, line);) lines.push_back(line);

  const auto start = std::chrono::steady_clock::now();
  const auto results = translator.translate(lines, cli.decoding);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  long target_tokens = 0;
  for (const auto& result : results) {
    for (const auto& hypothesis : result.hypotheses) {
      if (cli.with_scores) std::printf("%.6f\t", static_cast<double>(hypothesis.score));
      std::printf("%s\n", hypothesis.text.c_str());
    }
    if (!result.hypotheses.empty()) target_tokens += static_cast<long>(result.hypotheses[0].ids.size());
  }
  std::fflush(stdout);
  if (cli.verbose) {
    std::fprintf(stderr,
                 "rpt-translate: %zu sentences, %ld target tokens in %.3f s: %.1f sentences/s, "
                 "%.1f target tokens/s (beam %d, batch %d, %d BLAS threads)\n",
                 lines.size(), target_tokens, seconds, lines.size() / seconds,
                 target_tokens / seconds, cli.decoding.beam_size, cli.batch_size,
                 rpt::kernels::cpu_blas_threads());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"rpt-translate: translate stdin lines to stdout with an rpt model"};
  CliOptions cli;
  app.add_option("--model", cli.model, "Model directory (docs/model-format.md)")->required();
  app.add_option("--beam-size", cli.decoding.beam_size, "Beam size (1: greedy)")
      ->check(CLI::Range(1, 64));
  app.add_option("--n-best", cli.decoding.n_best, "Hypotheses printed per sentence")
      ->check(CLI::Range(1, 64));
  app.add_option("--batch-size", cli.batch_size, "Sentences decoded together")
      ->check(CLI::Range(1, 4096));
  app.add_option("--max-length", cli.decoding.max_length, "Maximum generated tokens")
      ->check(CLI::Range(1, 2047));
  app.add_option("--min-length", cli.decoding.min_length, "Minimum generated tokens")
      ->check(CLI::Range(0, 2047));
  app.add_option("--length-penalty", cli.decoding.length_penalty, "Length penalty alpha")
      ->check(CLI::Range(0.0, 10.0));
  app.add_option("--length-penalty-type", cli.length_penalty_type,
                 "average: len^alpha; gnmt: ((5+len)/6)^alpha; none")
      ->check(CLI::IsMember({"average", "gnmt", "none"}));
  app.add_option("--max-input-length", cli.max_input_length, "Longest source in tokens")
      ->check(CLI::Range(1, 2048));
  app.add_option("--device", cli.device, "cpu or cuda")->check(CLI::IsMember({"cpu", "cuda"}));
  app.add_option("--threads", cli.threads, "BLAS threads (0: library default)")
      ->check(CLI::Range(0, 1024));
  app.add_flag("--with-scores", cli.with_scores, "Prefix each line with its score and a tab");
  app.add_flag("--verbose", cli.verbose, "Print throughput on stderr");
  CLI11_PARSE(app, argc, argv);
  cli.decoding.length_penalty_type = parse_penalty_type(cli.length_penalty_type);

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
