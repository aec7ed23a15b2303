// The --api-keys file and the monthly quota: parsing errors name the line, an unknown or missing
// key is UNAUTHENTICATED, the quota admits up to its characters and refuses past them without
// charging, and no keys admit everything.
#include "server/api_keys.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <atomic>
#include <thread>
#include <vector>

namespace rpt::server {
namespace {

const char* const kFile =
    "# tenants\n"
    "team-a-0123456789abcdef\tTeam A\t100\n"
    "\n"
    "team-b-0123456789abcdef\tTeam B\r\n";

TEST(ApiKeys, ParsesKeysNamesAndQuotas) {
  ApiKeys keys = ApiKeys::parse(kFile, "keys.tsv");
  ASSERT_TRUE(keys.enabled());
  const ApiKey* a = keys.find("team-a-0123456789abcdef");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->name, "Team A");
  EXPECT_EQ(a->monthly_characters, 100);
  const ApiKey* b = keys.find("team-b-0123456789abcdef");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->monthly_characters, 0);
  EXPECT_EQ(keys.find("team-a"), nullptr);
}

TEST(ApiKeys, BadFilesNameTheLine) {
  auto error_of = [](const std::string& text) {
    try {
      ApiKeys::parse(text, "keys.tsv");
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of("short\tName\n").find("line 1: a key is 16-256"), std::string::npos);
  EXPECT_NE(error_of("# c\nteam-a-0123456789abcdef\n").find("line 2: want KEY<TAB>NAME"),
            std::string::npos);
  EXPECT_NE(error_of("team-a-0123456789abcdef\tA\t-5\n").find("whole number"), std::string::npos);
  EXPECT_NE(error_of("team-a-0123456789abcdef\tA\nteam-a-0123456789abcdef\tB\n")
                .find("line 2: the key is listed twice"),
            std::string::npos);
  EXPECT_NE(error_of("with space 0123456789abcdef\tA\n").find("no spaces"), std::string::npos);
  EXPECT_NE(error_of("# only comments\n").find("lists no key"), std::string::npos);
}

TEST(ApiKeys, KeysAndQuotasAdmitOrRefuse) {
  ApiKeys keys = ApiKeys::parse(kFile, "keys.tsv");
  EXPECT_EQ(keys.authorize("", 1).code, StatusCode::kUnauthenticated);
  EXPECT_EQ(keys.authorize("wrong-0123456789abcdef", 1).code, StatusCode::kUnauthenticated);
  EXPECT_TRUE(keys.authorize("team-a-0123456789abcdef", 60).ok());
  EXPECT_TRUE(keys.authorize("team-a-0123456789abcdef", 40).ok());  // exactly the quota
  const RequestStatus over = keys.authorize("team-a-0123456789abcdef", 1);
  EXPECT_EQ(over.code, StatusCode::kQuotaExceeded);
  EXPECT_NE(over.message.find("100 characters"), std::string::npos) << over.message;
  const ApiKeys::Usage usage = keys.usage(*keys.find("team-a-0123456789abcdef"));
  EXPECT_EQ(usage.characters, 100);  // the refused call charged nothing
  EXPECT_EQ(usage.limit, 100);
  EXPECT_TRUE(keys.authorize("team-b-0123456789abcdef", 1'000'000'000).ok());  // no quota
  EXPECT_EQ(to_http_status(StatusCode::kUnauthenticated), 401);
  EXPECT_EQ(to_grpc(over).error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
}

TEST(ApiKeys, ConcurrentChargesNeverPassTheQuota) {
  ApiKeys keys = ApiKeys::parse("k-0123456789abcdefgh\tK\t1000\n", "keys.tsv");
  std::vector<std::thread> threads;
  std::atomic<int> admitted{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 100; ++i) admitted += keys.authorize("k-0123456789abcdefgh", 3).ok();
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(admitted.load(), 333);
  EXPECT_EQ(keys.usage(*keys.find("k-0123456789abcdefgh")).characters, 999);
}

TEST(ApiKeys, NoKeysAdmitEverything) {
  ApiKeys none;
  EXPECT_FALSE(none.enabled());
  EXPECT_TRUE(none.authorize("", 1'000'000).ok());
  EXPECT_EQ(billed_characters("Grüße"), 5);
  EXPECT_EQ(billed_characters("\xff\xfe"), 2);
}

}  // namespace
}  // namespace rpt::server
