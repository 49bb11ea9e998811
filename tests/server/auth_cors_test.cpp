// API keys (401 on every endpoint but /health; sent as Authorization: Bearer or x-api-key), key files, the
// constant-time compare, CORS (off unless configured; preflight) and X-Request-Id.
#include <cstdio>
#include <fstream>

#include "server/auth.h"
#include "server_fixture.h"

namespace kairo::server::testing {
namespace {

using json = nlohmann::json;

class AuthTest : public ServerTest {
 protected:
  void SetUp() override {
    ServerConfig c = test_config();
    c.api_keys = {"sk-first", "sk-second"};
    start(c);
  }
};

TEST_F(AuthTest, MissingOrWrongKeyIs401OnEveryEndpointButHealth) {
  const json body = {{"prompt", "hi"}, {"max_tokens", 1}};
  for (const char* path : {"/v1/completions", "/v1/chat/completions", "/tokenize", "/detokenize"}) {
    auto r = post(path, body);
    ASSERT_EQ(r.status, 401) << path;
    EXPECT_EQ(r.header("www-authenticate"), "Bearer");
    EXPECT_EQ(r.json(), (json{{"error",
                               {{"message", "missing or invalid API key: send the header 'Authorization: Bearer <key>'"},
                                {"type", "authentication_error"},
                                {"param", nullptr},
                                {"code", "invalid_api_key"}}}}));
    EXPECT_EQ(post(path, body, {"Authorization: Bearer sk-firs"}).status, 401);
    EXPECT_EQ(post(path, body, {"Authorization: Bearer sk-first-and-more"}).status, 401);
    EXPECT_EQ(post(path, body, {"Authorization: sk-first"}).status, 401);
  }
  EXPECT_EQ(get("/v1/models").status, 401);
  EXPECT_EQ(get("/metrics").status, 401);
  EXPECT_EQ(get("/health").status, 200);
  EXPECT_TRUE(engine_->submitted().empty());
}

TEST_F(AuthTest, AnyConfiguredKeyIsAccepted) {
  const json body = {{"prompt", "hi"}, {"max_tokens", 1}};
  EXPECT_EQ(post("/v1/completions", body, {"Authorization: Bearer sk-first"}).status, 200);
  EXPECT_EQ(post("/v1/completions", body, {"Authorization: Bearer sk-second"}).status, 200);
  EXPECT_EQ(get("/metrics", {"Authorization: Bearer sk-second"}).status, 200);
}

TEST(AuthUnitTest, ConstantTimeEquals) {
  EXPECT_TRUE(constant_time_equals("abc", "abc"));
  EXPECT_TRUE(constant_time_equals("", ""));
  EXPECT_FALSE(constant_time_equals("abc", "abd"));
  EXPECT_FALSE(constant_time_equals("abc", "ab"));
  EXPECT_FALSE(constant_time_equals("ab", "abc"));
  EXPECT_FALSE(constant_time_equals("", "a"));
  EXPECT_FALSE(constant_time_equals(std::string("a\0b", 3), std::string("a\0c", 3)));
}

TEST(AuthUnitTest, AuthorizedNeedsBearerAndAKnownKey) {
  EXPECT_TRUE(authorized({}, ""));
  EXPECT_TRUE(authorized({"k1", "k2"}, "Bearer k2"));
  EXPECT_TRUE(authorized({"k1"}, "Bearer k1 "));
  EXPECT_FALSE(authorized({"k1"}, "Bearer "));
  EXPECT_FALSE(authorized({"k1"}, "bearer k1"));
  EXPECT_FALSE(authorized({"k1"}, ""));
}

TEST(AuthUnitTest, KeyFileSkipsCommentsAndBlankLines) {
  const std::string path = ::testing::TempDir() + "/kairo_keys.txt";
  {
    std::ofstream out(path);
    out << "# production keys\n\n  sk-one  \nsk-two\r\n#sk-disabled\n";
  }
  auto keys = load_api_key_file(path);
  ASSERT_TRUE(keys.ok()) << keys.error().message;
  EXPECT_EQ(*keys, (std::vector<std::string>{"sk-one", "sk-two"}));
  {
    std::ofstream out(path);
    out << "# nothing\n\n";
  }
  auto empty = load_api_key_file(path);
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().message,
            "the API key file " + path + " holds no keys (one per line; '#' starts a comment)");
  std::remove(path.c_str());
  auto missing = load_api_key_file(path);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, "cannot read the API key file " + path + " (--api-key-file)");
}

Tenant named(const std::string& name, const std::string& key) {
  Tenant t;
  t.name = name;
  t.key = key;
  return t;
}

TEST(KeyRingTest, AuthenticateYieldsTheKeysTenant) {
  KeyRing ring({"sk-plain"});
  ASSERT_TRUE(ring.set_tenants({named("team-a", "sk-a"), named("team-b", "sk-b")}).ok());
  auto a = ring.authenticate("Bearer sk-a");
  ASSERT_TRUE(a.has_value());
  ASSERT_NE(a->tenant, nullptr);
  EXPECT_EQ(a->name(), "team-a");
  auto b = ring.authenticate("Bearer sk-b ");
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->name(), "team-b");
  auto plain = ring.authenticate("Bearer sk-plain");
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(plain->tenant, nullptr);  // the anonymous tenant
  EXPECT_EQ(plain->name(), "");
  EXPECT_EQ(plain->weight(), 1.0);
  EXPECT_FALSE(ring.authenticate("Bearer sk-").has_value());
  EXPECT_FALSE(ring.authenticate("Bearer sk-ab").has_value());
  EXPECT_FALSE(ring.authenticate("sk-a").has_value());
  EXPECT_FALSE(ring.authenticate("").has_value());
}

TEST(KeyRingTest, AnthropicsXApiKeyIsTheFallbackForAuthorization) {
  KeyRing ring({"sk-plain"});
  ASSERT_TRUE(ring.set_tenants({named("team-a", "sk-a")}).ok());
  auto a = ring.authenticate("", "sk-a");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->name(), "team-a");
  EXPECT_TRUE(ring.authenticate("", " sk-plain ").has_value());
  EXPECT_TRUE(ring.authenticate("Bearer sk-a", "sk-wrong").has_value());  // Authorization decides when present
  EXPECT_FALSE(ring.authenticate("Bearer sk-wrong", "sk-a").has_value());
  EXPECT_FALSE(ring.authenticate("", "Bearer sk-a").has_value());  // the header's value is the key itself
  EXPECT_FALSE(ring.authenticate("", "").has_value());
  EXPECT_TRUE(KeyRing().authenticate("", "anything").has_value());
}

TEST(KeyRingTest, NoKeysMeansEveryoneIsAnonymous) {
  KeyRing ring;
  auto c = ring.authenticate("");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->tenant, nullptr);
}

TEST(KeyRingTest, SetTenantsSwapsTheWholeSetAndRefusesAPlainKey) {
  KeyRing ring({"sk-plain"});
  ASSERT_TRUE(ring.set_tenants({named("team-a", "sk-a")}).ok());
  auto held = ring.authenticate("Bearer sk-a");  // a request in flight keeps its tenant
  ASSERT_TRUE(ring.set_tenants({named("team-b", "sk-b")}).ok());
  EXPECT_FALSE(ring.authenticate("Bearer sk-a").has_value());
  EXPECT_EQ(ring.authenticate("Bearer sk-b")->name(), "team-b");
  EXPECT_EQ(held->name(), "team-a");
  const Status s = ring.set_tenants({named("team-c", "sk-c"), named("team-d", "sk-plain")});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message,
            "the key of \"team-d\" is also given with --api-key or --api-key-file; a key belongs to one tenant");
  EXPECT_EQ(ring.n_tenants(), 1u);  // the old set stays
  EXPECT_EQ(ring.authenticate("Bearer sk-b")->name(), "team-b");
  EXPECT_FALSE(ring.authenticate("Bearer sk-c").has_value());
}

class NoCorsTest : public ServerTest {
 protected:
  void SetUp() override { start(); }
};

TEST_F(NoCorsTest, NoCorsHeadersAndNoPreflightUnlessConfigured) {
  const auto r = get("/health", {"Origin: https://evil.example"});
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.header("access-control-allow-origin"), "");
  EXPECT_EQ(request(port_, "OPTIONS", "/v1/completions", "", {"Origin: https://evil.example"}).status, 405);
}

TEST_F(NoCorsTest, RequestIdIsEchoedOrGenerated) {
  auto r = get("/health", {"X-Request-Id: my-trace-123"});
  EXPECT_EQ(r.header("x-request-id"), "my-trace-123");
  r = get("/health");
  const std::string id = r.header("x-request-id");
  EXPECT_EQ(id.size(), 32u);
  EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_NE(get("/health").header("x-request-id"), id);
  r = get("/health", {"X-Request-Id: " + std::string(200, 'a')});  // too long: replaced
  EXPECT_EQ(r.header("x-request-id").size(), 32u);
}

class CorsTest : public ServerTest {
 protected:
  void SetUp() override {
    ServerConfig c = test_config();
    c.cors_origin = "https://app.example";
    c.api_keys = {"sk"};
    start(c);
  }
};

TEST_F(CorsTest, ResponsesCarryTheOriginAndPreflightNeedsNoKey) {
  auto r = get("/health");
  EXPECT_EQ(r.header("access-control-allow-origin"), "https://app.example");
  EXPECT_EQ(r.header("vary"), "Origin");
  r = request(port_, "OPTIONS", "/v1/chat/completions", "", {"Origin: https://app.example"});
  EXPECT_EQ(r.status, 204);
  EXPECT_EQ(r.header("access-control-allow-methods"), "GET, HEAD, POST, OPTIONS");
  EXPECT_EQ(r.header("access-control-allow-headers"),
            "Authorization, Content-Type, X-Request-Id, X-Api-Key, Anthropic-Version, Anthropic-Beta");
  EXPECT_EQ(r.header("access-control-allow-origin"), "https://app.example");
  r = post("/v1/completions", {{"prompt", "x"}});  // errors carry CORS too, so the browser can read them
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(r.header("access-control-allow-origin"), "https://app.example");
}

}  // namespace
}  // namespace kairo::server::testing
