// rpt-client: translate through an rpt-server.
//
//   rpt-client --server localhost:50051 --model en-de "Save the file." "Open a window."
//   rpt-client --server localhost:50051 --target de < sentences.txt
//   rpt-client --server dns:///rpt-pods.default.svc.cluster.local:50051 --lb round_robin ...
//   rpt-client --api-key-file tenant.key --model en-de "Save the file."   (rpt-server --api-keys)
//   rpt-client admin --key-file admin.key load fr models/en-fr    (client/admin_client.h)
//
// Texts come from the arguments, or one per line from stdin. With --n-best N each text prints N
// lines, best first (--with-scores prefixes the score and a tab). Blank lines are not sent (the
// server would return them unchanged) and print as they came (a CRLF line keeps its \r), so
// output stays aligned with input;
// input with no text at all prints only those and contacts no server. On failure the gRPC status is
// printed on stderr and the exit code is the gRPC status code (3 INVALID_ARGUMENT, 4
// DEADLINE_EXCEEDED, 5 NOT_FOUND, 8 RESOURCE_EXHAUSTED, 14 UNAVAILABLE, ...).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <grpcpp/grpcpp.h>

#include "client/admin_client.h"
#include "client/api_key.h"
#include "client/blank_text.h"
#include "client/channel.h"
#include "client/status_names.h"
#include "common/glossary_file.h"
#include "proto/translate.grpc.pb.h"

namespace {

struct ClientOptions {
  rpt::client::ChannelOptions channel;
  rpt::client::ApiKeyOptions api_key_options;
  std::string api_key;  // what api_key_options give: sent with every call (--api-keys)
  std::string model;
  std::string source;
  std::string target;
  int beam_size = 0;  // 0: the server's default
  int n_best = 0;
  int max_length = 0;
  double timeout_seconds = 60.0;
  bool with_scores = false;
  bool list_models = false;
  std::string glossary;       // a glossary TSV sent with the call
  std::string glossary_name;  // a glossary the server loaded
  std::vector<std::string> texts;
};

int fail(const grpc::Status& status) {
  std::cerr << "rpt-client: " << rpt::client::status_name(status.error_code()) << ": "
            << status.error_message() << "\n";
  return static_cast<int>(status.error_code());
}

// A call's context: its deadline (--timeout) and the API key.
void prepare_context(const ClientOptions& options, grpc::ClientContext* context) {
  context->set_deadline(std::chrono::system_clock::now() +
                        std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::duration<double>(options.timeout_seconds)));
  if (!options.api_key.empty()) context->AddMetadata("authorization", "Bearer " + options.api_key);
}

int list_models(rpt::v1::Translator::Stub& stub, const ClientOptions& options) {
  grpc::ClientContext context;
  prepare_context(options, &context);
  rpt::v1::ListModelsResponse response;
  const grpc::Status status = stub.ListModels(&context, {}, &response);
  if (!status.ok()) return fail(status);
  for (const auto& model : response.models()) {
    // Every language pair, "en->de,en->fr"; an older server names the one pair only.
    std::string pairs;
    for (const auto& pair : model.language_pairs()) {
      pairs += (pairs.empty() ? "" : ",") + pair.source_language() + "->" + pair.target_language();
    }
    if (pairs.empty()) pairs = model.source_language() + "->" + model.target_language();
    std::printf("%s\t%s\t%s\t%s\t%s\n", model.name().c_str(), pairs.c_str(), model.device().c_str(),
                model.dtype().c_str(), model.position_type().c_str());
  }
  return 0;
}

int translate(rpt::v1::Translator::Stub& stub, const ClientOptions& options) {
  rpt::v1::TranslateRequest request;
  request.mutable_model()->set_model(options.model);
  request.mutable_model()->set_source_language(options.source);
  request.mutable_model()->set_target_language(options.target);
  auto* decoding = request.mutable_options();
  decoding->set_beam_size(static_cast<std::uint32_t>(options.beam_size));
  decoding->set_n_best(static_cast<std::uint32_t>(options.n_best));
  decoding->set_max_length(static_cast<std::uint32_t>(options.max_length));
  decoding->set_return_scores(options.with_scores);
  request.set_glossary_name(options.glossary_name);
  if (!options.glossary.empty()) {
    try {
      for (const auto& line : rpt::read_glossary_file(options.glossary, 1 << 20)) {
        rpt::v1::GlossaryEntry* entry = request.add_glossary();
        entry->set_source(line.source);
        entry->set_target(line.target);
      }
    } catch (const std::invalid_argument& error) {
      std::cerr << "rpt-client: " << error.what() << "\n";
      return 2;
    }
  }
  std::vector<std::string> texts = options.texts;
  if (texts.empty()) {
    for (std::string line; std::getline(std::cin, line);) texts.push_back(line);
  }
  // Blank lines have nothing to translate (the server returns them unchanged): they are not sent
  // and come out blank, so the output stays line for line with the input.
  std::vector<bool> blank;
  for (const std::string& text : texts) {
    blank.push_back(rpt::client::is_blank(text));
    if (!blank.back()) request.add_texts(text);
  }

  grpc::ClientContext context;
  prepare_context(options, &context);
  rpt::v1::TranslateResponse response;
  if (request.texts_size() > 0) {
    const grpc::Status status = stub.Translate(&context, request, &response);
    if (!status.ok()) return fail(status);
    if (response.translations_size() != request.texts_size()) {
      std::cerr << "rpt-client: the server answered " << response.translations_size()
                << " translations for " << request.texts_size() << " texts\n";
      return 1;
    }
  }
  // A blank input gets as many lines as the other inputs' hypotheses.
  const int lines_per_text = response.translations_size() > 0
                                 ? response.translations(0).hypotheses_size()
                                 : std::max(1, options.n_best);
  int next = 0;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    if (blank[i]) {  // as it came, as the server would return it (a CRLF line keeps its \r)
      for (int h = 0; h < lines_per_text; ++h) std::printf("%s\n", texts[i].c_str());
      continue;
    }
    for (const auto& hypothesis : response.translations(next++).hypotheses()) {
      if (options.with_scores) std::printf("%.6f\t", static_cast<double>(hypothesis.score()));
      std::printf("%s\n", hypothesis.text().c_str());
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"rpt-client: translate texts (arguments or stdin lines) through an rpt-server"};
  ClientOptions options;
  app.add_option("texts", options.texts, "Texts to translate (default: one per stdin line)");
  rpt::client::add_channel_options(app, options.channel);
  rpt::client::add_api_key_options(app, options.api_key_options);
  app.add_option("--model", options.model, "Model name (see --list-models)");
  app.add_option("--source", options.source, "Source language, to route by language pair");
  app.add_option("--target", options.target, "Target language, to route by language pair");
  app.add_option("--beam-size", options.beam_size, "Beam size (0: the server's default)")
      ->check(CLI::Range(0, 1024));
  app.add_option("--n-best", options.n_best, "Hypotheses per text (0: the server's default)")
      ->check(CLI::Range(0, 1024));
  app.add_option("--max-length", options.max_length, "Maximum generated tokens (0: default)")
      ->check(CLI::Range(0, 1 << 20));
  app.add_option("--timeout", options.timeout_seconds, "Deadline in seconds")
      ->check(CLI::Range(0.001, 31536000.0))
      ->capture_default_str();
  app.add_flag("--with-scores", options.with_scores, "Prefix each line with its score and a tab");
  app.add_flag("--list-models", options.list_models, "List the server's models and exit");
  app.add_option("--glossary", options.glossary,
                 "Glossary TSV (source<TAB>target a line, # comments) sent with the call: its "
                 "terms are enforced in every text (the server checks the entries)")
      ->check(CLI::ExistingFile);
  app.add_option("--glossary-name", options.glossary_name,
                 "A glossary the server loaded (rpt-server --glossary NAME=FILE)");
  rpt::client::AdminOptions admin;
  CLI::App* admin_command = rpt::client::add_admin_subcommand(app, admin);
  CLI11_PARSE(app, argc, argv);
  if (admin_command->parsed()) return rpt::client::run_admin(admin);
  try {
    options.api_key = rpt::client::api_key(options.api_key_options);
  } catch (const std::runtime_error& error) {
    std::cerr << "rpt-client: " << error.what() << "\n";
    return 2;
  }

  auto stub = rpt::v1::Translator::NewStub(rpt::client::make_channel(options.channel));
  return options.list_models ? list_models(*stub, options) : translate(*stub, options);
}
