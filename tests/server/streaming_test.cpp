// SSE streaming: chunked framing, the exact OpenAI chunk shapes for completions and chat, [DONE],
// stream_options.include_usage, n > 1 and stop strings across chunks.
#include <set>

#include "server_fixture.h"

namespace kairo::server::testing {
namespace {

using json = nlohmann::json;

std::set<std::string> keys(const json& j) {
  std::set<std::string> out;
  for (const auto& [k, v] : j.items()) out.insert(k);
  return out;
}

class StreamingTest : public ServerTest {
 protected:
  void SetUp() override { start(); }
};

TEST_F(StreamingTest, CompletionChunksHaveTheOpenAIShapeAndEndWithDone) {
  const std::vector<int32_t> ids = {1, 300, 301};
  const auto r = post("/v1/completions", {{"prompt", ids}, {"max_tokens", 4}, {"stream", true}});
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.header("content-type"), "text/event-stream");
  EXPECT_EQ(r.header("cache-control"), "no-cache");
  EXPECT_TRUE(r.chunked);
  const auto events = r.sse_data();
  ASSERT_EQ(events.size(), 5u);  // one per token, then [DONE]
  EXPECT_EQ(events.back(), "[DONE]");
  std::string text;
  std::string id;
  for (size_t i = 0; i + 1 < events.size(); ++i) {
    const json c = json::parse(events[i]);
    const bool last = i + 2 == events.size();
    EXPECT_EQ(keys(c), (std::set<std::string>{"id", "object", "created", "model", "choices"}));
    EXPECT_EQ(c["object"], "text_completion");
    EXPECT_EQ(c["model"], "demo");
    if (id.empty()) id = c["id"];
    EXPECT_EQ(c["id"], id);  // one id for the whole stream
    ASSERT_EQ(c["choices"].size(), 1u);
    const json& ch = c["choices"][0];
    EXPECT_EQ(ch["index"], 0);
    EXPECT_TRUE(ch["logprobs"].is_null());
    if (last) {
      EXPECT_EQ(keys(ch), (std::set<std::string>{"index", "text", "logprobs", "finish_reason", "stop_reason"}));
      EXPECT_EQ(ch["finish_reason"], "length");
    } else {
      EXPECT_EQ(keys(ch), (std::set<std::string>{"index", "text", "logprobs", "finish_reason"}));
      EXPECT_TRUE(ch["finish_reason"].is_null());
    }
    text += ch["text"].get<std::string>();
  }
  EXPECT_EQ(text, fake_text(ids, 4));
}

TEST_F(StreamingTest, IncludeUsageAddsNullUsageToChunksAndAFinalUsageChunk) {
  const std::vector<int32_t> ids = {1, 300};
  const auto r = post("/v1/completions", {{"prompt", ids},
                                          {"max_tokens", 3},
                                          {"stream", true},
                                          {"stream_options", {{"include_usage", true}}}});
  ASSERT_EQ(r.status, 200);
  const auto events = r.sse_data();
  ASSERT_EQ(events.size(), 5u);  // 3 tokens, usage, [DONE]
  for (size_t i = 0; i < 3; ++i) {
    const json c = json::parse(events[i]);
    ASSERT_TRUE(c.contains("usage"));
    EXPECT_TRUE(c["usage"].is_null());
  }
  const json usage = json::parse(events[3]);
  EXPECT_EQ(usage["choices"], json::array());
  EXPECT_EQ(usage["usage"]["prompt_tokens"], 2);
  EXPECT_EQ(usage["usage"]["completion_tokens"], 3);
  EXPECT_EQ(usage["usage"]["total_tokens"], 5);
  EXPECT_EQ(events[4], "[DONE]");
}

TEST_F(StreamingTest, ChatChunksOpenWithTheRoleAndCloseWithFinishReason) {
  const auto r = post("/v1/chat/completions",
                      {{"messages", {{{"role", "user"}, {"content", "Hi"}}}}, {"max_tokens", 3}, {"stream", true}});
  ASSERT_EQ(r.status, 200);
  const auto events = r.sse_data();
  ASSERT_EQ(events.size(), 5u);  // role, 3 tokens (the last with finish_reason), [DONE]
  const json first = json::parse(events[0]);
  EXPECT_EQ(first["object"], "chat.completion.chunk");
  EXPECT_EQ(first["id"].get<std::string>().rfind("chatcmpl-", 0), 0u);
  EXPECT_EQ(first["choices"][0]["delta"], (json{{"role", "assistant"}, {"content", ""}}));
  EXPECT_TRUE(first["choices"][0]["finish_reason"].is_null());
  std::string text;
  for (size_t i = 1; i < 4; ++i) {
    const json c = json::parse(events[i]);
    const json& ch = c["choices"][0];
    EXPECT_EQ(keys(ch["delta"]), std::set<std::string>{"content"});
    text += ch["delta"]["content"].get<std::string>();
    if (i == 3) {
      EXPECT_EQ(ch["finish_reason"], "length");
    } else {
      EXPECT_TRUE(ch["finish_reason"].is_null());
    }
  }
  EXPECT_EQ(text, fake_text(engine_->submitted()[0].prompt_tokens, 3));
  EXPECT_EQ(events[4], "[DONE]");
}

TEST_F(StreamingTest, NChoicesStreamInterleavedWithTheirIndex) {
  const std::vector<int32_t> ids = {1, 300};
  const auto r = post("/v1/completions", {{"prompt", ids}, {"max_tokens", 3}, {"n", 2}, {"seed", 5}, {"stream", true}});
  ASSERT_EQ(r.status, 200);
  std::map<int, std::string> texts;
  std::map<int, std::string> finish;
  for (const auto& e : r.sse_data()) {
    if (e == "[DONE]") continue;
    const json c = json::parse(e);
    const int idx = c["choices"][0]["index"];
    texts[idx] += c["choices"][0]["text"].get<std::string>();
    if (!c["choices"][0]["finish_reason"].is_null()) finish[idx] = c["choices"][0]["finish_reason"];
  }
  EXPECT_EQ(texts[0], fake_text(ids, 3, 5));
  EXPECT_EQ(texts[1], fake_text(ids, 3, 6));
  EXPECT_EQ(finish[0], "length");
  EXPECT_EQ(finish[1], "length");
}

TEST_F(StreamingTest, StopStringEndsTheStreamWithTheTextBeforeIt) {
  const std::vector<int32_t> ids = {1, 300, 301};
  const std::string full = fake_text(ids, 10);
  const std::string stop = full.substr(full.size() / 2, 4);
  const auto r = post("/v1/completions", {{"prompt", ids}, {"max_tokens", 10}, {"stop", stop}, {"stream", true}});
  ASSERT_EQ(r.status, 200);
  std::string text;
  json last;
  for (const auto& e : r.sse_data()) {
    if (e == "[DONE]") continue;
    last = json::parse(e);
    text += last["choices"][0]["text"].get<std::string>();
  }
  EXPECT_EQ(text, full.substr(0, full.find(stop)));
  EXPECT_EQ(last["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(last["choices"][0]["stop_reason"], stop);
}

TEST_F(StreamingTest, ChatLogprobsStreamWithEachDelta) {
  const auto r = post("/v1/chat/completions", {{"messages", {{{"role", "user"}, {"content", "Hi"}}}},
                                               {"max_tokens", 2},
                                               {"stream", true},
                                               {"logprobs", true},
                                               {"top_logprobs", 1}});
  ASSERT_EQ(r.status, 200);
  const auto events = r.sse_data();
  ASSERT_EQ(events.size(), 4u);
  const auto& tok = demo_tokenizer();
  const auto prompt = engine_->submitted()[0].prompt_tokens;
  for (int k = 0; k < 2; ++k) {
    const json c = json::parse(events[1 + k]);
    const json& lp = c["choices"][0]["logprobs"]["content"];
    ASSERT_EQ(lp.size(), 1u);
    const int32_t id = FakeEngine::token_at(prompt, 0, k, tok.n_vocab());
    const std::string piece = tok.token_to_piece(id);
    EXPECT_EQ(lp[0]["token"], piece);
    EXPECT_FLOAT_EQ(lp[0]["logprob"].get<float>(), -0.25f * (k + 1));
    EXPECT_EQ(lp[0]["bytes"].size(), piece.size());
    ASSERT_EQ(lp[0]["top_logprobs"].size(), 1u);
    EXPECT_EQ(lp[0]["top_logprobs"][0]["token"], tok.token_to_piece(FakeEngine::top_token(id, 0, tok.n_vocab())));
  }
}

}  // namespace
}  // namespace kairo::server::testing
