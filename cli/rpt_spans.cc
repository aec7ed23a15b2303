// rpt-spans: the protected spans of each input line, as the engine sees them. Evaluation scripts
// count placeholders with it so that their numbers and the engine's agree.
//
//   rpt-spans [--no-accelerators] [FILE...] < lines
//
// One JSON object per input line (stdin when no file is named), in input order:
//   {"spans":[{"text":"%s","kind":"printf","begin":5,"end":7,"partner":-1}]}
// begin and end are byte offsets into the line; partner is the index of the matching tag or -1.
// Exits 1 when a file cannot be read.
#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "spans/protected_spans.h"

namespace {

void print_spans(const std::string& line, const rpt::SpanRecognitionOptions& options) {
  nlohmann::ordered_json spans = nlohmann::ordered_json::array();
  for (const rpt::ProtectedSpan& span : rpt::find_protected_spans(line, options)) {
    spans.push_back({{"text", line.substr(span.begin, span.end - span.begin)},
                     {"kind", rpt::span_kind_name(span.kind)},
                     {"begin", span.begin},
                     {"end", span.end},
                     {"partner", span.partner},
                     {"closing", span.closing}});
  }
  // Replace, not throw: a line that is not valid UTF-8 still gets its line of output.
  const nlohmann::ordered_json line_json{{"spans", spans}};
  std::cout << line_json.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace)
            << '\n';
}

void print_stream(std::istream& in, const rpt::SpanRecognitionOptions& options) {
  std::string line;
  while (std::getline(in, line)) {
    if (line.ends_with('\r')) line.pop_back();  // CRLF files
    print_spans(line, options);
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Print the protected spans (placeholders, markup, escapes) of each input line "
      "as one JSON object a line."};
  bool no_accelerators = false;
  std::vector<std::string> files;
  app.add_flag("--no-accelerators", no_accelerators,
               "Do not report keyboard accelerator markers (&File, _Open)");
  app.add_option("files", files, "Input files (default: stdin)");
  CLI11_PARSE(app, argc, argv);

  const rpt::SpanRecognitionOptions options{.accelerators = !no_accelerators};
  std::ios::sync_with_stdio(false);
  if (files.empty()) {
    print_stream(std::cin, options);
    return 0;
  }
  for (const std::string& path : files) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      std::cerr << "rpt-spans: cannot read " << path << '\n';
      return 1;
    }
    print_stream(in, options);
  }
  return 0;
}
