// The fairness run of `kairo bench serve --background-api-key` against the fake OpenAI server: each level runs alone
// and then during the burst, the burst goes out under its own key with its own shape, and the report shows both.
#include "bench/serve/tenant_fairness.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "fake_openai_server.h"

namespace kairo::bench::serve {
namespace {

using testing::FakeOpenAiServer;
using testing::FakeServerOptions;

TEST(TenantFairness, EachLevelRunsAloneThenDuringABurstUnderTheOtherKey) {
  FakeServerOptions fo;
  fo.first_delay = std::chrono::milliseconds(20);
  fo.gap = std::chrono::milliseconds(2);
  FakeOpenAiServer server(fo);
  SweepOptions o;
  o.client.url = parse_url(server.url()).value();
  o.client.model = "fake-model";
  o.client.api_key = "fg-key";
  o.client.timeout_s = 30;
  o.workload.input_tokens = 8;
  o.workload.output_tokens = 3;
  o.n_requests = 4;
  o.levels = {{false, 2}};
  BackgroundLoad bg;
  bg.api_key = "bg-key";
  bg.n_requests = 5;
  bg.input_tokens = 40;
  bg.output_tokens = 6;
  bg.lead_s = 0.05;

  auto result = run_fairness(o, bg);
  ASSERT_TRUE(result.ok()) << result.error().message;
  ASSERT_EQ(result->size(), 1u);
  const FairnessLevel& f = (*result)[0];
  EXPECT_EQ(f.alone.n_ok, 4);
  EXPECT_EQ(f.shared.n_ok, 4);
  EXPECT_EQ(f.background.n_ok, 5);
  EXPECT_EQ(f.background.output_tokens, 30);
  EXPECT_GE(f.alone.ttft_ms.p99, 20.0);
  EXPECT_GT(f.p99_ttft_ratio(), 0.0);

  // A check request under each key, then 4 + 4 foreground and 5 burst completions, each with its own key and shape.
  const auto bodies = server.bodies();
  const auto auths = server.authorizations();
  ASSERT_EQ(bodies.size(), 15u);
  ASSERT_EQ(auths.size(), 15u);
  EXPECT_EQ(std::count(auths.begin(), auths.end(), "Bearer fg-key"), 9);
  EXPECT_EQ(std::count(auths.begin(), auths.end(), "Bearer bg-key"), 6);
  for (size_t i = 0; i < bodies.size(); ++i) {
    if (auths[i] != "Bearer bg-key" || bodies[i]["max_tokens"] == 3) continue;  // the check request: the foreground shape
    EXPECT_EQ(bodies[i]["max_tokens"], 6);
    EXPECT_EQ(bodies[i]["stream"], true);
  }

  const std::string md = fairness_markdown(*result, bg);
  EXPECT_NE(md.find("p99 TTFT ratio"), std::string::npos);
  EXPECT_NE(md.find("burst of 5 requests"), std::string::npos);
  const auto j = fairness_json(*result, bg, {{"url", server.url()}});
  EXPECT_EQ(j["levels"][0]["background"]["n_ok"], 5);
  EXPECT_EQ(j["background"]["requests"], 5);
}

TEST(TenantFairness, AWrongBurstShapeIsRefused) {
  SweepOptions o;
  o.levels = {{false, 1}};
  BackgroundLoad bg;
  bg.api_key = "k";
  bg.n_requests = 0;
  auto result = run_fairness(o, bg);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("--background-requests"), std::string::npos);
}

}  // namespace
}  // namespace kairo::bench::serve
