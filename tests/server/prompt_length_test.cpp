// Text prompts longer than the context: refused with OpenAI's context_length_exceeded error, after tokenizing only as
// far as the context (Tokenizer::encode_at_most), so an 8 MB prompt costs no more than one that barely overflows.
// Prompts that fit keep their exact token counts in the messages.
#include "server_fixture.h"

namespace kairo::server::testing {
namespace {

using json = nlohmann::json;

// Just under the server's 8 MiB body limit once wrapped in JSON.
std::string megabytes_of_prose() {
  const std::string sentence = "The lighthouse keeper climbed the stairs at dusk and lit the lamp. ";
  std::string s;
  while (s.size() < 8'000'000) s += sentence;
  s.resize(8'000'000);
  return s;
}

class PromptLengthTest : public ServerTest {
 protected:
  void SetUp() override { start(); }  // the fake engine's context: 256 tokens

  void expect_context_error(const HttpResult& r, const std::string& message, const char* param) {
    ASSERT_EQ(r.status, 400) << r.body;
    const json e = r.json()["error"];
    EXPECT_EQ(e["message"], message);
    EXPECT_EQ(e["param"], param);
    EXPECT_EQ(e["code"], "context_length_exceeded");
    EXPECT_EQ(e["type"], "invalid_request_error");
    EXPECT_TRUE(engine_->submitted().empty());
  }
};

TEST_F(PromptLengthTest, AnEightMegabyteCompletionPromptIsRefusedWithTheContextMessage) {
  const auto r = post("/v1/completions", {{"prompt", megabytes_of_prose()}, {"max_tokens", 4}});
  expect_context_error(r,
                       "This model's maximum context length is 256 tokens. However, your prompt is more than 256 "
                       "tokens, which leaves no room for the completion. Please shorten your prompt.",
                       "prompt");
  EXPECT_EQ(post("/v1/completions", {{"prompt", "ok"}, {"max_tokens", 1}}).status, 200);
}

TEST_F(PromptLengthTest, AnEightMegabyteChatMessageIsRefusedWithTheContextMessage) {
  const json messages = json::array({{{"role", "user"}, {"content", megabytes_of_prose()}}});
  const auto r = post("/v1/chat/completions", {{"messages", messages}, {"max_tokens", 4}});
  expect_context_error(r,
                       "This model's maximum context length is 256 tokens. However, your messages is more than 256 "
                       "tokens, which leaves no room for the completion. Please shorten your messages.",
                       "messages");
}

TEST_F(PromptLengthTest, OneOversizedPromptOfABatchRefusesTheBatch) {
  const auto r = post("/v1/completions", {{"prompt", json::array({"short", megabytes_of_prose().substr(0, 100000)})},
                                          {"max_tokens", 4}});
  expect_context_error(r,
                       "This model's maximum context length is 256 tokens. However, your prompt is more than 256 "
                       "tokens, which leaves no room for the completion. Please shorten your prompt.",
                       "prompt");
}

TEST_F(PromptLengthTest, ATextPromptThatFitsKeepsItsExactCountInTheMessage) {
  // Under the context by itself, over it with max_tokens: tokenized in full, so the message counts exactly.
  std::string text;
  while (encode(text + "stars ").size() < 240) text += "stars ";
  const int n_prompt = static_cast<int>(encode(text).size());
  ASSERT_LT(n_prompt, 256);
  const auto r = post("/v1/completions", {{"prompt", text}, {"max_tokens", 30}});
  expect_context_error(r,
                       "This model's maximum context length is 256 tokens. However, you requested " +
                           std::to_string(n_prompt + 30) + " tokens (" + std::to_string(n_prompt) +
                           " in the prompt, 30 for the completion). Please reduce the length of the prompt or the "
                           "completion (max_tokens).",
                       "max_tokens");
  // And one that fits is served with exactly encode()'s tokens.
  ASSERT_EQ(post("/v1/completions", {{"prompt", text}, {"max_tokens", 2}}).status, 200);
  ASSERT_EQ(engine_->submitted().size(), 1u);
  EXPECT_EQ(engine_->submitted()[0].prompt_tokens, encode(text));
}

}  // namespace
}  // namespace kairo::server::testing
