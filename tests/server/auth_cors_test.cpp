// API keys (401 on every endpoint but /health), key files, the constant-time compare, CORS (off unless
// configured; preflight) and X-Request-Id.
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
  EXPECT_EQ(r.header("access-control-allow-headers"), "Authorization, Content-Type, X-Request-Id");
  EXPECT_EQ(r.header("access-control-allow-origin"), "https://app.example");
  r = post("/v1/completions", {{"prompt", "x"}});  // errors carry CORS too, so the browser can read them
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(r.header("access-control-allow-origin"), "https://app.example");
}

}  // namespace
}  // namespace kairo::server::testing
