// rpt-server with --tls-cert/--tls-key: a client that trusts the certificate translates exactly
// as over plaintext, a plaintext or untrusting client gets UNAVAILABLE (not a hang), /metrics
// stays plain HTTP, and a missing or mismatched key stops the server at start with a message.
// The certificates are made at test time by the `openssl` command (no key material in the repo).
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server_process.h"

namespace rpt::server_test {
namespace {

using ::testing::HasSubstr;

std::string find_openssl() {
  for (const char* candidate : {"/usr/bin/openssl", "/usr/local/bin/openssl"}) {
    if (access(candidate, X_OK) == 0) return candidate;
  }
  return {};
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

struct KeyPair {
  std::string cert;  // paths
  std::string key;
};

// A self-signed P-256 certificate for CN localhost with SANs localhost and 127.0.0.1, valid a
// day (EC rather than RSA: instant to generate, nothing on stderr).
KeyPair make_self_signed(const std::string& openssl, const std::string& directory,
                         const std::string& stem) {
  const KeyPair pair{directory + "/" + stem + ".crt", directory + "/" + stem + ".key"};
  const Finished made = run_to_exit(
      {openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
       "-nodes", "-keyout", pair.key, "-out", pair.cert, "-days", "1", "-subj", "/CN=localhost",
       "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"},
      "", 60);
  if (made.exit_code != 0) throw std::runtime_error("openssl req failed:\n" + made.errors);
  return pair;
}

v1::TranslateRequest request(const std::vector<std::string>& texts) {
  v1::TranslateRequest r;
  r.mutable_model()->set_model("en-de");
  for (const auto& text : texts) r.add_texts(text);
  return r;
}

std::shared_ptr<grpc::Channel> tls_channel(const std::string& address,
                                           const std::string& root_cert_path,
                                           const std::string& target_name = "") {
  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = read_text(root_cert_path);
  grpc::ChannelArguments arguments;
  // Checks the certificate's DNS name as well as its IP address (the address dialled).
  if (!target_name.empty()) arguments.SetSslTargetNameOverride(target_name);
  return grpc::CreateCustomChannel(address, grpc::SslCredentials(ssl), arguments);
}

grpc::Status translate(const std::shared_ptr<grpc::Channel>& channel, const v1::TranslateRequest& r,
                       v1::TranslateResponse* response) {
  // The deadline turns a hang into DEADLINE_EXCEEDED, which the refusal tests would catch.
  auto context = context_with_deadline(20);
  return v1::Translator::NewStub(channel)->Translate(context.get(), r, response);
}

class ServerTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    openssl_ = find_openssl();
    if (openssl_.empty()) GTEST_SKIP() << "no openssl binary (Debian package `openssl`)";
    directory_ = make_temp_dir("rpt_tls_test_");
    pair_ = make_self_signed(openssl_, directory_, "server");
  }
  void TearDown() override {
    if (!directory_.empty()) std::filesystem::remove_all(directory_);
  }

  std::vector<std::string> tls_arguments() const {
    return {"--model", "en-de=" + fixture_model(), "--tls-cert", pair_.cert, "--tls-key",
            pair_.key};
  }

  std::string openssl_;
  std::string directory_;
  KeyPair pair_;
};

TEST_F(ServerTlsTest, TrustingClientTranslatesAsOverPlaintext) {
  ServerProcess tls(tls_arguments());
  ServerProcess plaintext({"--model", "en-de=" + fixture_model()});
  EXPECT_THAT(tls.log(), HasSubstr("(TLS)"));

  const std::vector<std::string> texts = {"Save the file.", "Open a new window.",
                                          "The file could not be opened."};
  v1::TranslateResponse expected;
  ASSERT_TRUE(translate(plaintext.channel(), request(texts), &expected).ok());
  for (const std::string target_name : {"", "localhost"}) {
    v1::TranslateResponse response;
    const grpc::Status status =
        translate(tls_channel(tls.address(), pair_.cert, target_name), request(texts), &response);
    ASSERT_TRUE(status.ok()) << target_name << ": " << status.error_message() << "\n" << tls.log();
    ASSERT_EQ(response.translations_size(), 3);
    for (int i = 0; i < 3; ++i) {
      const std::string& text = response.translations(i).hypotheses(0).text();
      EXPECT_FALSE(text.empty());
      EXPECT_EQ(text, expected.translations(i).hypotheses(0).text());
    }
  }

  // /metrics is plain HTTP by design, also under TLS (server/http_server.h), and counts the
  // calls that came over TLS.
  const std::string ok =
      R"(rpt_requests_total{code="OK",method="Translate",model="en-de",protocol="grpc"})";
  EXPECT_EQ(metric_value(http_get(tls.metrics_port(), "/metrics"), ok).value_or(-1), 2.0);
  // So are the probes a Kubernetes kubelet can use where its gRPC probe cannot speak TLS.
  EXPECT_EQ(http_request(tls.metrics_port(), "/readyz").status, 200);
  EXPECT_EQ(http_request(tls.metrics_port(), "/healthz").status, 200);
}

TEST_F(ServerTlsTest, PlaintextClientIsRefusedWithUnavailable) {
  ServerProcess tls(tls_arguments());
  v1::TranslateResponse response;
  const grpc::Status status =
      translate(grpc::CreateChannel(tls.address(), grpc::InsecureChannelCredentials()),
                request({"Save the file."}), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
}

TEST_F(ServerTlsTest, ClientThatDoesNotTrustTheCertificateIsRefused) {
  ServerProcess tls(tls_arguments());
  const KeyPair stranger = make_self_signed(openssl_, directory_, "stranger");
  v1::TranslateResponse response;
  const grpc::Status status =
      translate(tls_channel(tls.address(), stranger.cert), request({"Save the file."}), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
}

TEST_F(ServerTlsTest, RefusesToStartWithoutAUsableCertificateAndKey) {
  const KeyPair stranger = make_self_signed(openssl_, directory_, "stranger");
  const std::string missing = directory_ + "/missing.key";
  struct Case {
    std::vector<std::string> tls_flags;
    int exit_code;  // server/main.cc: 2 for bad flags, 1 for a start that fails
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"--tls-cert", pair_.cert}, 2, "--tls-cert and --tls-key go together"},
      {{"--tls-key", pair_.key}, 2, "--tls-cert and --tls-key go together"},
      {{"--tls-cert", pair_.cert, "--tls-key", missing}, 1, missing},
      {{"--tls-cert", missing, "--tls-key", pair_.key}, 1, missing},
      {{"--tls-cert", pair_.cert, "--tls-key", stranger.key}, 1, "with TLS"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> argv = {
        server_binary(),  "--model", "en-de=" + fixture_model(), "--listen", "127.0.0.1:0",
        "--metrics-port", "0"};
    argv.insert(argv.end(), c.tls_flags.begin(), c.tls_flags.end());
    const Finished finished = run_to_exit(argv, "", 60);
    EXPECT_EQ(finished.exit_code, c.exit_code) << c.message << "\n" << finished.errors;
    EXPECT_THAT(finished.output + finished.errors, HasSubstr(c.message));
  }
}

}  // namespace
}  // namespace rpt::server_test
