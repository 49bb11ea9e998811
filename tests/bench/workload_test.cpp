#include "bench/serve/workload.h"

#include <gtest/gtest.h>

#include <sstream>

#include "bench/serve/openai_request.h"

namespace kairo::bench::serve {
namespace {

int count_words(const std::string& s) {
  std::istringstream in(s);
  std::string w;
  int n = 0;
  while (in >> w) ++n;
  return n;
}

TEST(Workload, RandomSessionsHaveTheAskedLengthsAndDifferentPrompts) {
  WorkloadOptions o;
  o.input_tokens = 40;
  o.output_tokens = 9;
  const auto s = make_sessions(o, 5);
  ASSERT_EQ(s.size(), 5u);
  for (const auto& x : s) {
    ASSERT_EQ(x.turns.size(), 1u);
    EXPECT_EQ(count_words(x.turns[0].user_text), 40);
    EXPECT_EQ(x.turns[0].n_words, 40);
    EXPECT_EQ(x.turns[0].max_tokens, 9);
    EXPECT_EQ(x.endpoint, Endpoint::Completions);
  }
  EXPECT_NE(s[0].turns[0].user_text, s[1].turns[0].user_text);
  // Same seed, same prompts.
  EXPECT_EQ(make_sessions(o, 5)[3].turns[0].user_text, s[3].turns[0].user_text);
}

TEST(Workload, MixedDrawsLongRequestsAtTheGivenFraction) {
  WorkloadOptions o;
  o.kind = WorkloadKind::Mixed;
  o.long_fraction = 0.25;
  o.input_tokens = 8;
  o.long_input_tokens = 64;
  o.output_tokens = 4;
  o.long_output_tokens = 32;
  const auto s = make_sessions(o, 400);
  int n_long = 0;
  for (const auto& x : s) {
    const bool lng = x.turns[0].n_words == 64;
    EXPECT_EQ(x.turns[0].max_tokens, lng ? 32 : 4);
    EXPECT_TRUE(lng || x.turns[0].n_words == 8);
    n_long += lng;
  }
  EXPECT_GT(n_long, 60);   // 100 expected; a seeded draw, far from both bounds
  EXPECT_LT(n_long, 140);
}

TEST(Workload, MultiTurnSharesTheSystemPromptAndCountsTurns) {
  WorkloadOptions o;
  o.kind = WorkloadKind::MultiTurn;
  o.turns = 3;
  o.prefix_tokens = 20;
  const auto s = make_sessions(o, 7);  // 3 + 3 + 1 turns
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].turns.size(), 3u);
  EXPECT_EQ(s[2].turns.size(), 1u);
  EXPECT_EQ(s[0].system_prompt, s[1].system_prompt);
  EXPECT_EQ(count_words(s[0].system_prompt), 20);
  EXPECT_EQ(s[0].endpoint, Endpoint::Chat);
}

TEST(Workload, ChatBodyReplaysEarlierTurnsWithTheReplies) {
  WorkloadOptions o;
  o.kind = WorkloadKind::MultiTurn;
  o.turns = 3;
  o.output_tokens = 5;
  const auto s = make_sessions(o, 3);
  ClientConfig c;
  c.model = "m";
  const auto body = build_request_body(c, s[0], 2, {"r0", "r1"});
  EXPECT_EQ(body["model"], "m");
  EXPECT_EQ(body["max_tokens"], 5);
  EXPECT_EQ(body["stream"], true);
  EXPECT_EQ(body["ignore_eos"], true);
  EXPECT_EQ(body["stream_options"]["include_usage"], true);
  const auto& msgs = body["messages"];
  ASSERT_EQ(msgs.size(), 6u);
  EXPECT_EQ(msgs[0]["role"], "system");
  EXPECT_EQ(msgs[1]["content"], s[0].turns[0].user_text);
  EXPECT_EQ(msgs[2]["role"], "assistant");
  EXPECT_EQ(msgs[2]["content"], "r0");
  EXPECT_EQ(msgs[4]["content"], "r1");
  EXPECT_EQ(msgs[5]["content"], s[0].turns[2].user_text);
  EXPECT_FALSE(body.contains("prompt"));
}

TEST(Workload, ParseKind) {
  EXPECT_EQ(parse_workload_kind("mixed").value(), WorkloadKind::Mixed);
  EXPECT_EQ(parse_workload_kind("shared-prefix").value(), WorkloadKind::MultiTurn);
  auto bad = parse_workload_kind("burst");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "--workload \"burst\" is unknown; use random, mixed or multi-turn");
}

TEST(Url, ParseAndEndpointPaths) {
  auto u = parse_url("http://127.0.0.1:8080");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->host, "127.0.0.1");
  EXPECT_EQ(u->port, "8080");
  EXPECT_EQ(endpoint_path(*u, "completions"), "/v1/completions");
  auto v = parse_url("http://localhost/v1/");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->port, "80");
  EXPECT_EQ(endpoint_path(*v, "chat/completions"), "/v1/chat/completions");
  EXPECT_EQ(endpoint_path(*parse_url("http://h:1/proxy"), "models"), "/proxy/v1/models");
  EXPECT_FALSE(parse_url("https://x").ok());
  EXPECT_FALSE(parse_url("127.0.0.1:8080").ok());
  EXPECT_FALSE(parse_url("http://h:port").ok());
}

}  // namespace
}  // namespace kairo::bench::serve
