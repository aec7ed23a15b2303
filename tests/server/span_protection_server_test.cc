// Protected spans through rpt-server (gRPC on loopback, the bundled en-fr model): on by default
// with spans_kept and protected_spans in the answer, off on request, and counted in /metrics.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server_process.h"

namespace rpt::server_test {
namespace {

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(SpanProtectionServer, KeptByDefaultOffOnRequestAndCounted) {
  ServerProcess server({"--model", "en-fr=" + source_dir() + "/models/en-fr"});
  // The bundled model drops "column %d" without protection (tests/engine/span_protection_test.cc).
  const std::string source = "Reading module %qs at line %d column %d: %s";
  const std::string spans_total = R"(rpt_protected_spans_total{model="en-fr"})";
  const double spans_before =
      metric_value(http_get(server.metrics_port(), "/metrics"), spans_total).value_or(0);

  v1::TranslateRequest request;
  request.add_texts(source);
  request.add_texts("Open the file");
  v1::TranslateResponse response;
  auto context = context_with_deadline(60);
  ASSERT_TRUE(server.stub()->Translate(context.get(), request, &response).ok());
  ASSERT_EQ(response.translations_size(), 2);
  const v1::Translation& kept = response.translations(0);
  EXPECT_EQ(kept.protected_spans(), 4u);
  EXPECT_TRUE(kept.hypotheses(0).spans_kept());
  EXPECT_EQ(count(kept.hypotheses(0).text(), "%d"), 2) << kept.hypotheses(0).text();
  EXPECT_EQ(response.translations(1).protected_spans(), 0u);
  EXPECT_TRUE(response.translations(1).hypotheses(0).spans_kept());

  request.mutable_options()->set_protect_spans(false);
  v1::TranslateResponse plain;
  context = context_with_deadline(60);
  ASSERT_TRUE(server.stub()->Translate(context.get(), request, &plain).ok());
  EXPECT_EQ(plain.translations(0).protected_spans(), 0u);
  EXPECT_LT(count(plain.translations(0).hypotheses(0).text(), "%d"), 2)
      << plain.translations(0).hypotheses(0).text();

  const std::string after = http_get(server.metrics_port(), "/metrics");
  EXPECT_EQ(metric_value(after, spans_total).value_or(0), spans_before + 4);
  EXPECT_EQ(metric_value(after, R"(rpt_spans_lost_total{model="en-fr"})").value_or(-1), 0);
}

}  // namespace
}  // namespace rpt::server_test
