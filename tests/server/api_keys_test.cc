// The --api-keys file and its tenants (server/api_keys.h): parsing errors name the file and the
// YAML line, keys are found by their SHA-256 digest, an unknown or missing key is UNAUTHENTICATED
// and a model the tenant may not use PERMISSION_DENIED, the token buckets refill, burst and say
// when to retry (a fake clock), the monthly quota admits up to its characters, a refused call is
// charged nothing, a reload carries the usage of the tenants that keep their name, and no keys
// admit everything.
#include "server/api_keys.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace rpt::server {
namespace {

using namespace std::chrono_literals;

const std::string kShopKey = "shop-0123456789abcdef";
const std::string kShopKey2 = "shop-2-0123456789abcdef";
const std::string kOpenKey = "open-0123456789abcdef";

// A clock the test moves by hand.
class FakeClock final : public TenantClock {
 public:
  std::chrono::steady_clock::time_point now() const override { return now_; }
  int month() const override { return month_; }
  void advance(std::chrono::steady_clock::duration by) { now_ += by; }
  void set_month(int month) { month_ = month; }

 private:
  std::chrono::steady_clock::time_point now_{std::chrono::hours(1000)};
  int month_ = 2030 * 12;
};

const char* const kFile = R"(# tenants of the test
tenants:
  - name: shop
    keys: [shop-0123456789abcdef, "shop-2-0123456789abcdef"]
    models: [en-de]
    characters_per_month: 100
    priority: 3
  - name: open
    keys:
      - open-0123456789abcdef
)";

std::string error_of(const std::string& text) {
  try {
    ApiKeys::parse(text, "keys.yaml");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

struct Keys {
  std::shared_ptr<FakeClock> clock = std::make_shared<FakeClock>();
  ApiKeys keys{clock};
  explicit Keys(const std::string& text) { keys.replace(text, "keys.yaml"); }
};

TEST(ApiKeys, ParsesTenants) {
  const std::vector<TenantSpec> specs = ApiKeys::parse(kFile, "keys.yaml");
  ASSERT_EQ(specs.size(), 2u);
  EXPECT_EQ(specs[0].name, "shop");
  ASSERT_EQ(specs[0].keys.size(), 2u);
  EXPECT_EQ(specs[0].keys[1], key_digest(kShopKey2));
  ASSERT_TRUE(specs[0].models.has_value());
  EXPECT_EQ(*specs[0].models, std::vector<std::string>{"en-de"});
  EXPECT_EQ(specs[0].characters_per_month, 100);
  EXPECT_EQ(specs[0].priority, 3);
  EXPECT_EQ(specs[0].burst_seconds, 1);
  EXPECT_FALSE(specs[1].models.has_value());  // every model
  EXPECT_EQ(specs[1].requests_per_second, 0);
  EXPECT_EQ(specs[1].priority, 1);
  EXPECT_TRUE(specs[1].may_use("anything"));
  EXPECT_FALSE(specs[0].may_use("en-fr"));
}

TEST(ApiKeys, BadFilesNameTheFileAndTheLine) {
  const std::string head = "tenants:\n  - name: a\n    keys: [a-0123456789abcdefgh]\n";
  EXPECT_NE(error_of(head + "    colour: blue\n")
                .find("--api-keys keys.yaml line 4: unknown field 'colour'"),
            std::string::npos);
  EXPECT_NE(error_of(head + "    name: b\n").find("line 4: the field 'name' is given twice"),
            std::string::npos);
  // A key pasted as a field name is not shown.
  const std::string pasted = error_of(head + "    sk-0123456789abcdefgh: 1\n");
  EXPECT_NE(pasted.find("line 4: unknown field (21 characters, not shown)"), std::string::npos)
      << pasted;
  EXPECT_EQ(pasted.find("0123456789abcdefgh"), std::string::npos) << pasted;
  EXPECT_NE(error_of(head + "    requests_per_second: fast\n")
                .find("line 4: requests_per_second must be a number >= 0"),
            std::string::npos);
  EXPECT_NE(error_of(head + "    requests_per_second: \"20\"\n").find("line 4: requests_per"),
            std::string::npos);  // a quoted number is a string
  EXPECT_NE(error_of(head + "    characters_per_month: -5\n").find("line 4: characters_per_month"),
            std::string::npos);
  EXPECT_NE(error_of(head + "    characters_per_month: 1.5\n").find("whole number"),
            std::string::npos);
  EXPECT_NE(error_of(head + "    priority: 11\n")
                .find("line 4: priority must be a whole number "
                      "from 1 to 10"),
            std::string::npos);
  EXPECT_NE(error_of(head + "    burst_seconds: 0\n").find("line 4: burst_seconds must be"),
            std::string::npos);
  EXPECT_NE(error_of(head + "    models: en-de\n").find("line 4: models must be a list"),
            std::string::npos);
  EXPECT_NE(error_of(head + "    models: []\n").find("line 4: models must be a list"),
            std::string::npos);
  EXPECT_NE(error_of(head + "  - name: a\n    keys: [b-0123456789abcdefgh]\n")
                .find("line 4: the tenant name 'a' is listed twice"),
            std::string::npos);
  // A key listed twice, in one tenant or two: named by its digest, never itself.
  const std::string twice =
      error_of(head + "  - name: b\n    keys:\n      - a-0123456789abcdefgh\n");
  EXPECT_NE(twice.find("line 6: the " + key_label("a-0123456789abcdefgh") +
                       " is listed twice (also line 3)"),
            std::string::npos)
      << twice;
  EXPECT_EQ(twice.find("a-0123456789abcdefgh"), std::string::npos) << twice;
  EXPECT_NE(error_of("tenants:\n  - name: a\n    keys: [short]\n")
                .find("line 3: a key is 16-256 printable ASCII characters, no spaces"),
            std::string::npos);
  EXPECT_NE(error_of("tenants:\n  - name: a b\n    keys: [a-0123456789abcdefgh]\n")
                .find("line 2: a tenant's name is 1-64 of"),
            std::string::npos);
  EXPECT_NE(error_of("tenants:\n  - keys: [a-0123456789abcdefgh]\n")
                .find("line 2: the tenant "
                      "has no name"),
            std::string::npos);
  EXPECT_NE(error_of("tenants:\n  - name: a\n").find("line 2: the tenant 'a' has no keys"),
            std::string::npos);
  EXPECT_NE(error_of("tenants:\n  - name: a\n    keys: {x: y}\n").find("line 3: keys must be"),
            std::string::npos);
  EXPECT_NE(error_of("tenant:\n  - name: a\n").find("line 1: unknown field 'tenant'"),
            std::string::npos);
  EXPECT_NE(error_of("tenants: []\n").find("line 1: `tenants` must be a list"), std::string::npos);
  EXPECT_NE(error_of("# nothing\n").find("lists no tenant"), std::string::npos);
  EXPECT_NE(error_of("{}\n").find("line 1: the file lists no tenant"), std::string::npos);
  EXPECT_NE(error_of("- a\n").find("line 1: the file must be a mapping"), std::string::npos);
  // YAML syntax errors carry yaml-cpp's line.
  EXPECT_NE(error_of("tenants:\n  - name: [a\n").find("--api-keys keys.yaml line "),
            std::string::npos);
  EXPECT_NE(error_of("tenants:\n  - name: a\n   keys: [x]\n").find("line 3"), std::string::npos);
  EXPECT_NE(error_of("tenants: " + std::string(5000, '[') + std::string(5000, ']'))
                .find("line 1: lists and mappings nested too deep"),
            std::string::npos);
}

TEST(ApiKeys, KeysAreFoundByTheirDigest) {
  Keys k(kFile);
  EXPECT_TRUE(k.keys.enabled());
  EXPECT_EQ(k.keys.tenant_name(kShopKey), "shop");
  EXPECT_EQ(k.keys.tenant_name(kShopKey2), "shop");
  EXPECT_EQ(k.keys.tenant_name(kOpenKey), "open");
  EXPECT_EQ(k.keys.tenant_name(kShopKey + "x"), std::nullopt);
  EXPECT_EQ(k.keys.tenant_name(""), std::nullopt);
  // What the schedulers' fair admission weighs a call by.
  const std::optional<TenantIdentity> shop = k.keys.identify(kShopKey2);
  ASSERT_TRUE(shop.has_value());
  EXPECT_EQ(shop->name, "shop");
  EXPECT_EQ(shop->priority, 3);
  EXPECT_EQ(k.keys.identify(kOpenKey)->priority, 1);
  EXPECT_FALSE(k.keys.identify(kShopKey + "x").has_value());
  // The digest is SHA-256 ("abc": FIPS 180-2's example); labels show its first 4 bytes.
  EXPECT_EQ(key_label("abc"), "key sha256:ba7816bf");
  // The tenants keep digests only.
  for (const TenantSpec& tenant : k.keys.tenants()) {
    for (const KeyDigest& digest : tenant.keys) EXPECT_NE(key_label(digest), "");
  }
  const RequestStatus none = k.keys.authenticate("");
  EXPECT_EQ(none.code, StatusCode::kUnauthenticated);
  const RequestStatus wrong = k.keys.authenticate("wrong-0123456789abcdef");
  EXPECT_EQ(wrong.code, StatusCode::kUnauthenticated);
  EXPECT_NE(wrong.message.find(key_label("wrong-0123456789abcdef")), std::string::npos);
  EXPECT_EQ(wrong.message.find("wrong-0123456789abcdef"), std::string::npos);  // never the key
  EXPECT_TRUE(k.keys.authenticate(kShopKey).ok());
  EXPECT_EQ(to_http_status(StatusCode::kUnauthenticated), 401);
}

TEST(ApiKeys, ModelsATenantMayNotUseArePermissionDenied) {
  Keys k(kFile);
  EXPECT_TRUE(k.keys.check_model(kShopKey, "en-de").ok());
  const RequestStatus denied = k.keys.check_model(kShopKey, "en-fr");
  EXPECT_EQ(denied.code, StatusCode::kPermissionDenied);
  EXPECT_NE(denied.message.find("tenant shop may not use the model 'en-fr'"), std::string::npos);
  EXPECT_TRUE(k.keys.check_model(kOpenKey, "en-fr").ok());
  EXPECT_EQ(k.keys.check_model("wrong-0123456789abcdef", "en-de").code,
            StatusCode::kUnauthenticated);
  // Nothing charged for the refused call.
  EXPECT_EQ(k.keys.admit(kShopKey, "en-fr", 10).code, StatusCode::kPermissionDenied);
  EXPECT_EQ(k.keys.usage(kShopKey)->characters, 0);
  EXPECT_TRUE(k.keys.admit(kShopKey, "en-de", 10).ok());
  EXPECT_EQ(k.keys.usage(kShopKey)->characters, 10);
  EXPECT_EQ(to_http_status(StatusCode::kPermissionDenied), 403);
  EXPECT_EQ(to_grpc(denied).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(code_name(StatusCode::kPermissionDenied), "PERMISSION_DENIED");
}

TEST(ApiKeys, MonthlyQuotaAdmitsUpToItsCharactersAndRenews) {
  Keys k(kFile);
  EXPECT_TRUE(k.keys.admit(kShopKey, std::nullopt, 60).ok());
  EXPECT_TRUE(k.keys.admit(kShopKey2, std::nullopt, 40)
                  .ok());  // exactly the quota, the tenant's keys share it
  const RequestStatus over = k.keys.admit(kShopKey, std::nullopt, 1);
  EXPECT_EQ(over.code, StatusCode::kQuotaExceeded);
  EXPECT_NE(over.message.find("100 characters"), std::string::npos) << over.message;
  EXPECT_EQ(over.retry_after_seconds, 0);
  EXPECT_EQ(retry_after(over), "");  // retrying does not help
  const ApiKeys::Usage usage = *k.keys.usage(kShopKey2);
  EXPECT_EQ(usage.characters, 100);  // the refused call charged nothing
  EXPECT_EQ(usage.limit, 100);
  EXPECT_TRUE(k.keys.admit(kOpenKey, std::nullopt, 1'000'000'000).ok());  // no quota
  EXPECT_EQ(to_grpc(over).error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(k.keys.usage("wrong-0123456789abcdef"), std::nullopt);
  k.clock->set_month(2030 * 12 + 1);
  EXPECT_EQ(k.keys.usage(kShopKey)->characters, 0);
  EXPECT_TRUE(k.keys.admit(kShopKey, std::nullopt, 100).ok());
}

TEST(ApiKeys, RequestBucketRefillsBurstsAndSaysWhenToRetry) {
  Keys k(
      "tenants:\n  - name: t\n    keys: [t-0123456789abcdefgh]\n"
      "    requests_per_second: 2\n    burst_seconds: 2\n");
  const std::string key = "t-0123456789abcdefgh";
  for (int i = 0; i < 4; ++i)
    EXPECT_TRUE(k.keys.admit(key, std::nullopt, 1).ok()) << i;  // the burst: 2 x 2
  RequestStatus refused = k.keys.admit(key, std::nullopt, 1);
  EXPECT_EQ(refused.code, StatusCode::kResourceExhausted);
  EXPECT_EQ(refused.retry_after_seconds, 1);  // 0.5 s, rounded up
  EXPECT_EQ(retry_after(refused), "1");
  EXPECT_NE(refused.message.find("2 requests a second"), std::string::npos) << refused.message;
  k.clock->advance(400ms);  // 0.8 of a request
  EXPECT_EQ(k.keys.admit(key, std::nullopt, 1).code, StatusCode::kResourceExhausted);
  k.clock->advance(100ms);  // 1
  EXPECT_TRUE(k.keys.admit(key, std::nullopt, 1).ok());
  EXPECT_EQ(k.keys.admit(key, std::nullopt, 1).code, StatusCode::kResourceExhausted);
  k.clock->advance(1h);  // refilled to the burst, not beyond
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(k.keys.admit(key, std::nullopt, 1).ok()) << i;
  EXPECT_EQ(k.keys.admit(key, std::nullopt, 1).code, StatusCode::kResourceExhausted);
  // The refused calls charged nothing: the characters count only the admitted ones.
  EXPECT_EQ(k.keys.usage(key)->characters, 9);
}

TEST(ApiKeys, CharacterBucketRetryAfterComesFromTheBucket) {
  // 600 characters a minute: 10 a second, 30 held (burst 3 s).
  Keys k(
      "tenants:\n  - name: t\n    keys: [t-0123456789abcdefgh]\n"
      "    characters_per_minute: 600\n    burst_seconds: 3\n");
  const std::string key = "t-0123456789abcdefgh";
  EXPECT_TRUE(k.keys.admit(key, std::nullopt, 25).ok());  // 5 left
  RequestStatus refused = k.keys.admit(key, std::nullopt, 20);
  EXPECT_EQ(refused.code, StatusCode::kResourceExhausted);
  EXPECT_EQ(refused.retry_after_seconds, 2);  // 15 more at 10 a second: 1.5 s, rounded up
  EXPECT_NE(refused.message.find("600 characters a minute"), std::string::npos);
  k.clock->advance(1500ms);
  EXPECT_TRUE(k.keys.admit(key, std::nullopt, 20).ok());  // 0 left
  // A call larger than the bucket waits for a full bucket, then leaves it in debt.
  refused = k.keys.admit(key, std::nullopt, 100);
  EXPECT_EQ(refused.retry_after_seconds, 3);
  k.clock->advance(3s);
  EXPECT_TRUE(k.keys.admit(key, std::nullopt, 100).ok());  // 30 - 100 = -70
  refused = k.keys.admit(key, std::nullopt, 1);
  EXPECT_EQ(refused.retry_after_seconds, 8);  // 71 at 10 a second: 7.1 s
  k.clock->advance(7100ms);
  EXPECT_TRUE(k.keys.admit(key, std::nullopt, 1).ok());
}

TEST(ApiKeys, BothBucketsMustHoldTheCallAndRefusalsTakeNothing) {
  Keys k(
      "tenants:\n  - name: t\n    keys: [t-0123456789abcdefgh]\n"
      "    requests_per_second: 1\n    characters_per_minute: 60\n    burst_seconds: 10\n");
  const std::string key = "t-0123456789abcdefgh";
  EXPECT_TRUE(k.keys.admit(key, std::nullopt, 8).ok());  // requests 9, characters 2 left
  EXPECT_EQ(k.keys.admit(key, std::nullopt, 5).retry_after_seconds, 3);  // characters short by 3
  EXPECT_TRUE(k.keys.admit(key, std::nullopt, 2).ok());  // the refusal took no request
  k.clock->advance(5s);
  EXPECT_TRUE(k.keys.admit(key, std::nullopt, 5).ok());
}

TEST(ApiKeys, RefundGivesBackWhatAdmitTook) {
  // A call refused after it was charged (a full admission queue) is charged nothing in the end.
  Keys k(
      "tenants:\n  - name: t\n    keys: [t-0123456789abcdefgh]\n    requests_per_second: 1\n"
      "    characters_per_minute: 60\n    burst_seconds: 100\n    characters_per_month: 1000\n");
  const std::string key = "t-0123456789abcdefgh";
  EXPECT_TRUE(k.keys.admit(key, std::nullopt, 60).ok());
  EXPECT_EQ(k.keys.admit(key, std::nullopt, 50).retry_after_seconds, 10);
  k.keys.refund(key, 60);
  EXPECT_EQ(k.keys.usage(key)->characters, 0);
  EXPECT_TRUE(k.keys.admit(key, std::nullopt, 100).ok());  // the whole bucket and month again
  k.keys.refund("wrong-0123456789abcdef", 100);            // no tenant: nothing
  k.keys.refund(key, 0);  // a call of 0 characters: its request back, no characters
  EXPECT_EQ(k.keys.usage(key)->characters, 100);
  k.clock->set_month(2030 * 12 + 1);
  k.keys.refund(key, 100);  // last month's characters stay last month's
  EXPECT_EQ(k.keys.usage(key)->characters, 0);
  EXPECT_TRUE(k.keys.admit(key, std::nullopt, 100).ok());  // the bucket had them back
}

TEST(ApiKeys, TokenBucketAlone) {
  const auto start = std::chrono::steady_clock::time_point{} + 1h;
  TokenBucket unlimited;
  EXPECT_TRUE(unlimited.unlimited());
  EXPECT_EQ(unlimited.wait_seconds(1e12, start), 0);
  TokenBucket bucket(4, 8, start);  // full
  EXPECT_EQ(bucket.tokens(start), 8);
  bucket.take(8, start);
  EXPECT_DOUBLE_EQ(bucket.wait_seconds(2, start), 0.5);
  EXPECT_DOUBLE_EQ(bucket.tokens(start + 1s), 4);
  bucket.reconfigure(1, 2, start + 1s);  // fewer tokens than it held: cut to the capacity
  EXPECT_DOUBLE_EQ(bucket.tokens(start + 1s), 2);
  bucket.reconfigure(0, 0, start + 1s);
  EXPECT_TRUE(bucket.unlimited());
  bucket.reconfigure(1, 5, start + 1s);  // from unlimited: full
  EXPECT_DOUBLE_EQ(bucket.tokens(start + 1s), 5);
}

TEST(ApiKeys, ReloadCarriesUsageRevokesAndAddsKeys) {
  Keys k(
      "tenants:\n  - name: shop\n    keys: [shop-0123456789abcdef]\n"
      "    characters_per_month: 100\n    requests_per_second: 1\n    burst_seconds: 2\n"
      "  - name: gone\n    keys: [gone-0123456789abcdef]\n");
  EXPECT_TRUE(k.keys.admit(kShopKey, std::nullopt, 30).ok());
  EXPECT_TRUE(k.keys.admit(kShopKey, std::nullopt, 30).ok());  // the request bucket is empty
  EXPECT_EQ(k.keys.admit(kShopKey, std::nullopt, 1).code, StatusCode::kResourceExhausted);
  k.keys.replace(
      "tenants:\n  - name: shop\n    keys: [shop-2-0123456789abcdef]\n"
      "    characters_per_month: 100\n    requests_per_second: 1\n    burst_seconds: 2\n"
      "  - name: new\n    keys: [new-0123456789abcdef]\n",
      "keys.yaml");
  EXPECT_EQ(k.keys.authenticate(kShopKey).code, StatusCode::kUnauthenticated);  // revoked
  EXPECT_EQ(k.keys.authenticate("gone-0123456789abcdef").code, StatusCode::kUnauthenticated);
  EXPECT_TRUE(k.keys.authenticate("new-0123456789abcdef").ok());
  // The tenant kept its name: its month and its empty bucket carry over to its new key.
  EXPECT_EQ(k.keys.usage(kShopKey2)->characters, 60);
  EXPECT_EQ(k.keys.admit(kShopKey2, std::nullopt, 1).code, StatusCode::kResourceExhausted);
  k.clock->advance(1s);
  EXPECT_TRUE(k.keys.admit(kShopKey2, std::nullopt, 40).ok());
  EXPECT_EQ(k.keys.admit(kShopKey2, std::nullopt, 1).code, StatusCode::kQuotaExceeded);
  // A bad file keeps what is served.
  EXPECT_THROW(k.keys.replace("tenants: nope\n", "keys.yaml"), std::invalid_argument);
  EXPECT_TRUE(k.keys.authenticate(kShopKey2).ok());
  EXPECT_EQ(k.keys.usage(kShopKey2)->characters, 100);
}

TEST(ApiKeys, ReloadReadsTheFileAgainAndSaysWhatChanged) {
  const std::string path = testing::TempDir() + "/api_keys_test_keys.yaml";
  const auto write = [&path](const std::string& text) {
    std::FILE* file = std::fopen(path.c_str(), "w");
    ASSERT_NE(file, nullptr);
    std::fputs(text.c_str(), file);
    std::fclose(file);
  };
  write(kFile);
  ApiKeys keys;
  keys.load(path);
  EXPECT_TRUE(keys.authenticate(kOpenKey).ok());
  write(
      "tenants:\n  - name: shop\n    keys: [shop-0123456789abcdef]\n"
      "  - name: other\n    keys: [other-0123456789abcdef]\n");
  ApiKeys::Reload reload = keys.reload();
  ASSERT_TRUE(reload.ok) << reload.message;
  EXPECT_NE(reload.message.find("2 tenant(s), 2 key(s)"), std::string::npos) << reload.message;
  EXPECT_NE(reload.message.find("tenant shop: " + key_label(kShopKey2) + " revoked"),
            std::string::npos)
      << reload.message;
  EXPECT_NE(reload.message.find("tenant other added"), std::string::npos) << reload.message;
  EXPECT_NE(reload.message.find("tenant open removed"), std::string::npos) << reload.message;
  EXPECT_EQ(reload.message.find("0123456789abcdef"), std::string::npos) << reload.message;
  EXPECT_EQ(keys.authenticate(kOpenKey).code, StatusCode::kUnauthenticated);
  write("tenants:\n  - name: shop\n    keys: [shop-0123456789abcdef]\n    extra: 1\n");
  reload = keys.reload();
  EXPECT_FALSE(reload.ok);
  EXPECT_NE(reload.message.find("line 4: unknown field 'extra'"), std::string::npos);
  EXPECT_NE(reload.message.find("the previous keys stay"), std::string::npos);
  EXPECT_TRUE(keys.authenticate("other-0123456789abcdef").ok());
  std::remove(path.c_str());
  EXPECT_FALSE(keys.reload().ok);  // gone: the keys stay
  EXPECT_TRUE(keys.authenticate("other-0123456789abcdef").ok());
  EXPECT_THROW(keys.load(path), std::invalid_argument);
  ApiKeys none;
  EXPECT_FALSE(none.reload().ok);
}

TEST(ApiKeys, ConcurrentChargesNeverPassTheQuota) {
  Keys k(
      "tenants:\n  - name: k\n    keys: [k-0123456789abcdefgh]\n"
      "    characters_per_month: 1000\n");
  std::vector<std::thread> threads;
  std::atomic<int> admitted{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 100; ++i)
        admitted += k.keys.admit("k-0123456789abcdefgh", std::nullopt, 3).ok();
    });
  }
  // Reloads meanwhile: calls in flight keep the table they started with, the count carries over.
  for (int i = 0; i < 20; ++i) {
    k.keys.replace(
        "tenants:\n  - name: k\n    keys: [k-0123456789abcdefgh]\n"
        "    characters_per_month: 1000\n",
        "keys.yaml");
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(admitted.load(), 333);
  EXPECT_EQ(k.keys.usage("k-0123456789abcdefgh")->characters, 999);
}

TEST(ApiKeys, NoKeysAdmitEverything) {
  ApiKeys none;
  EXPECT_FALSE(none.enabled());
  EXPECT_TRUE(none.admit("", "any", 1'000'000).ok());
  EXPECT_TRUE(none.check_model("", "any").ok());
  EXPECT_EQ(none.usage("anything-0123456789"), std::nullopt);
  EXPECT_EQ(billed_characters("Grüße"), 5);
  EXPECT_EQ(billed_characters("\xff\xfe"), 2);
}

}  // namespace
}  // namespace rpt::server
