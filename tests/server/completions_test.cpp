// POST /v1/completions over HTTP against the fake engine: response shapes, prompts as text / ids / batches, n,
// stop strings, logprobs, usage, and what reaches the engine.
#include "server_fixture.h"

namespace kairo::server::testing {
namespace {

using json = nlohmann::json;

class CompletionsTest : public ServerTest {
 protected:
  void SetUp() override { start(); }
};

TEST_F(CompletionsTest, TextPromptReturnsTheEngineTextAndUsage) {
  const auto r = post("/v1/completions", {{"model", "demo"}, {"prompt", "Once upon a time"}, {"max_tokens", 5}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.header("content-type"), "application/json");
  const json j = r.json();
  const auto prompt = encode("Once upon a time");
  EXPECT_EQ(j["object"], "text_completion");
  EXPECT_EQ(j["id"].get<std::string>().rfind("cmpl-", 0), 0u);
  EXPECT_EQ(j["model"], "demo");
  EXPECT_TRUE(j["created"].is_number_integer());
  ASSERT_EQ(j["choices"].size(), 1u);
  EXPECT_EQ(j["choices"][0]["index"], 0);
  EXPECT_EQ(j["choices"][0]["text"], fake_text(prompt, 5));
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  EXPECT_TRUE(j["choices"][0]["logprobs"].is_null());
  EXPECT_EQ(j["usage"]["prompt_tokens"], prompt.size());
  EXPECT_EQ(j["usage"]["completion_tokens"], 5);
  EXPECT_EQ(j["usage"]["total_tokens"], prompt.size() + 5);
  EXPECT_EQ(j["usage"]["prompt_tokens_details"]["cached_tokens"], 0);

  const auto sent = engine_->submitted();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].prompt_tokens, prompt);
  EXPECT_EQ(sent[0].stop.max_tokens, 5);
  EXPECT_EQ(engine_->n_invalid(), 0);
}

TEST_F(CompletionsTest, SamplingParametersReachTheEngine) {
  const json body = {{"prompt", "Hi"},
                     {"max_tokens", 3},
                     {"temperature", 0.5},
                     {"top_p", 0.9},
                     {"top_k", 40},
                     {"min_p", 0.05},
                     {"seed", 1234},
                     {"presence_penalty", 0.5},
                     {"frequency_penalty", -0.5},
                     {"repetition_penalty", 1.1},
                     {"logit_bias", {{"300", -100}, {"301", 5.5}}},
                     {"ignore_eos", true},
                     {"stop_token_ids", {400, 401}},
                     {"user", "alice"},
                     {"speculative", false}};
  const auto r = post("/v1/completions", body);
  ASSERT_EQ(r.status, 200) << r.body;
  const auto sent = engine_->submitted();
  ASSERT_EQ(sent.size(), 1u);
  const auto& s = sent[0].sampling;
  EXPECT_FLOAT_EQ(s.temperature, 0.5f);
  EXPECT_FLOAT_EQ(s.top_p, 0.9f);
  EXPECT_EQ(s.top_k, 40);
  EXPECT_FLOAT_EQ(s.min_p, 0.05f);
  ASSERT_TRUE(s.seed.has_value());
  EXPECT_EQ(*s.seed, 1234u);
  EXPECT_FLOAT_EQ(s.presence_penalty, 0.5f);
  EXPECT_FLOAT_EQ(s.frequency_penalty, -0.5f);
  EXPECT_FLOAT_EQ(s.repetition_penalty, 1.1f);
  const std::vector<std::pair<int32_t, float>> bias = {{300, -100.0f}, {301, 5.5f}};
  EXPECT_EQ(s.logit_bias, bias);
  EXPECT_EQ(s.n_logprobs, -1);
  EXPECT_TRUE(sent[0].stop.ignore_eos);
  EXPECT_EQ(sent[0].stop.stop_token_ids, (std::vector<int32_t>{400, 401}));
  EXPECT_EQ(sent[0].stop.max_tokens, 3);
  EXPECT_FALSE(sent[0].speculative);
}

TEST_F(CompletionsTest, DefaultMaxTokensIs16AndTopKMinusOneMeansOff) {
  const auto r = post("/v1/completions", {{"prompt", "Hi"}, {"top_k", -1}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json()["usage"]["completion_tokens"], 16);
  EXPECT_EQ(engine_->submitted()[0].stop.max_tokens, 16);
  EXPECT_EQ(engine_->submitted()[0].sampling.top_k, 0);
  EXPECT_TRUE(engine_->submitted()[0].speculative);  // speculation is the server's choice unless a request opts out
  const auto bad = post("/v1/completions", {{"prompt", "Hi"}, {"speculative", "no"}});
  EXPECT_EQ(bad.status, 400) << bad.body;
  EXPECT_NE(bad.body.find("speculative"), std::string::npos);
}

TEST_F(CompletionsTest, TokenIdPromptIsPassedThrough) {
  const std::vector<int32_t> ids = {1, 300, 301, 302};
  const auto r = post("/v1/completions", {{"prompt", ids}, {"max_tokens", 4}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json()["choices"][0]["text"], fake_text(ids, 4));
  EXPECT_EQ(engine_->submitted()[0].prompt_tokens, ids);
  EXPECT_EQ(r.json()["usage"]["prompt_tokens"], 4);
}

TEST_F(CompletionsTest, BatchOfPromptsTimesNGivesOrderedChoicesAndCountsEachPromptOnce) {
  const std::vector<int32_t> a = {1, 300, 301};
  const std::vector<int32_t> b = {1, 400};
  const auto r = post("/v1/completions", {{"prompt", {a, b}}, {"max_tokens", 3}, {"n", 2}, {"seed", 7}});
  ASSERT_EQ(r.status, 200) << r.body;
  const json j = r.json();
  ASSERT_EQ(j["choices"].size(), 4u);
  EXPECT_EQ(j["choices"][0]["text"], fake_text(a, 3, 7));
  EXPECT_EQ(j["choices"][1]["text"], fake_text(a, 3, 8));  // n choices get seed, seed+1, ...
  EXPECT_EQ(j["choices"][2]["text"], fake_text(b, 3, 7));
  EXPECT_EQ(j["choices"][3]["text"], fake_text(b, 3, 8));
  for (int i = 0; i < 4; ++i) EXPECT_EQ(j["choices"][i]["index"], i);
  EXPECT_EQ(j["usage"]["prompt_tokens"], 5);  // 3 + 2, not once per choice
  EXPECT_EQ(j["usage"]["completion_tokens"], 12);
  EXPECT_EQ(engine_->submitted().size(), 4u);
}

TEST_F(CompletionsTest, ArrayOfTextPrompts) {
  const auto r = post("/v1/completions", {{"prompt", {"Hello", "World"}}, {"max_tokens", 2}});
  ASSERT_EQ(r.status, 200) << r.body;
  const json j = r.json();
  ASSERT_EQ(j["choices"].size(), 2u);
  EXPECT_EQ(j["choices"][0]["text"], fake_text(encode("Hello"), 2));
  EXPECT_EQ(j["choices"][1]["text"], fake_text(encode("World"), 2));
}

TEST_F(CompletionsTest, StopStringCutsTheTextAndIsReported) {
  const std::vector<int32_t> ids = {1, 300, 301};
  const std::string full = fake_text(ids, 8);
  // A stop string taken from the middle of what the engine would write: the text ends just before it.
  const std::string stop = full.substr(full.size() / 2, 3);
  const size_t cut = full.find(stop);
  const auto r = post("/v1/completions", {{"prompt", ids}, {"max_tokens", 8}, {"stop", {stop, "zzzz"}}});
  ASSERT_EQ(r.status, 200) << r.body;
  const json j = r.json();
  EXPECT_EQ(j["choices"][0]["text"], full.substr(0, cut));
  EXPECT_EQ(j["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(j["choices"][0]["stop_reason"], stop);
  EXPECT_EQ(engine_->submitted()[0].stop.stop_strings, (std::vector<std::string>{stop, "zzzz"}));
}

TEST_F(CompletionsTest, StopAsASingleString) {
  const auto r = post("/v1/completions", {{"prompt", "Hi"}, {"max_tokens", 2}, {"stop", "\n"}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(engine_->submitted()[0].stop.stop_strings, std::vector<std::string>{"\n"});
}

TEST_F(CompletionsTest, LogprobsHaveTheLegacyShape) {
  const std::vector<int32_t> ids = {1, 300};
  const auto r = post("/v1/completions", {{"prompt", ids}, {"max_tokens", 3}, {"logprobs", 2}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(engine_->submitted()[0].sampling.n_logprobs, 2);
  const json lp = r.json()["choices"][0]["logprobs"];
  ASSERT_EQ(lp["tokens"].size(), 3u);
  const auto& tok = demo_tokenizer();
  size_t offset = 0;
  for (int k = 0; k < 3; ++k) {
    const int32_t id = FakeEngine::token_at(ids, 0, k, tok.n_vocab());
    EXPECT_EQ(lp["tokens"][k], tok.token_to_piece(id));
    EXPECT_FLOAT_EQ(lp["token_logprobs"][k].get<float>(), -0.25f * (k + 1));
    EXPECT_EQ(lp["text_offset"][k].get<size_t>(), offset);
    offset += tok.token_to_piece(id).size();
    const json expected_top = {{tok.token_to_piece(FakeEngine::top_token(id, 0, tok.n_vocab())), -0.5},
                               {tok.token_to_piece(FakeEngine::top_token(id, 1, tok.n_vocab())), -1.0}};
    EXPECT_EQ(lp["top_logprobs"][k], expected_top);
  }
}

TEST_F(CompletionsTest, ModelAliasAndAbsentModelAreAccepted) {
  EXPECT_EQ(post("/v1/completions", {{"prompt", "a"}, {"model", "demo-alias"}, {"max_tokens", 1}}).status, 200);
  const auto r = post("/v1/completions", {{"prompt", "a"}, {"max_tokens", 1}});
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.json()["model"], "demo");
}

TEST_F(CompletionsTest, RepeatedPromptReportsCachedTokens) {
  std::vector<int32_t> ids(40, 300);
  ids[0] = 1;
  ASSERT_EQ(post("/v1/completions", {{"prompt", ids}, {"max_tokens", 1}}).status, 200);
  const auto r = post("/v1/completions", {{"prompt", ids}, {"max_tokens", 1}});
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.json()["usage"]["prompt_tokens_details"]["cached_tokens"], 32);  // fake: whole 16-token blocks
}

TEST_F(CompletionsTest, KeepAliveServesSeveralRequestsOnOneConnection) {
  Connection c(port_);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(c.send(format_request("POST", "/v1/completions", json{{"prompt", "Hi"}, {"max_tokens", 2}}.dump())));
    auto r = c.read_response();
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->header("connection"), "keep-alive");
  }
}

TEST_F(CompletionsTest, PipelinedRequestsAreAnsweredInOrder) {
  Connection c(port_);
  std::string both = format_request("POST", "/v1/completions", json{{"prompt", {1, 300}}, {"max_tokens", 1}}.dump()) +
                     format_request("POST", "/v1/completions", json{{"prompt", {1, 301}}, {"max_tokens", 2}}.dump());
  ASSERT_TRUE(c.send(both));
  auto r1 = c.read_response();
  auto r2 = c.read_response();
  ASSERT_TRUE(r1 && r2);
  EXPECT_EQ(r1->json()["usage"]["completion_tokens"], 1);
  EXPECT_EQ(r2->json()["usage"]["completion_tokens"], 2);
}

}  // namespace
}  // namespace kairo::server::testing
