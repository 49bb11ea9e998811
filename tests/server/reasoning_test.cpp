// Reasoning separation in /v1/chat/completions with a template that opens the thinking block (Qwen3, DeepSeek-R1
// prompts end with "<think>\n"): the fake engine's reply never closes it, so it is all reasoning (the "no end before
// max_tokens" case), streamed as reasoning_content deltas; with --reasoning-format none it stays content. The
// splitting itself (markers across tokens, template-opened or not) is in reasoning_splitter_test.cpp.
#include "server_fixture.h"

namespace kairo::server::testing {
namespace {

using json = nlohmann::json;

ChatTemplate thinking_template() {
  return [](const ChatTemplateInput& in) -> Result<std::string> {
    std::string s;
    for (const auto& m : in.messages) s += m["role"].get<std::string>() + ": " + m["content"].get<std::string>() + "\n";
    return s + "assistant: <think>\n";
  };
}

class ReasoningTest : public ServerTest {
 protected:
  void start_with(ServerConfig::ReasoningFormat format, bool template_thinks) {
    ServerConfig config = test_config();
    config.reasoning_format = format;
    engine_ = std::make_unique<FakeEngine>(demo_tokenizer(), FakeEngineConfig{});
    server_ = std::make_unique<Server>(config, test_model());
    ASSERT_TRUE(server_->start().ok());
    server_->attach(*engine_, demo_tokenizer(), thinking_template(), ChatTemplateTraits{template_thinks});
    port_ = server_->port();
  }
  json body(bool stream) const {
    return json{{"messages", {{{"role", "user"}, {"content", "2+2?"}}}}, {"max_tokens", 5}, {"stream", stream}};
  }
};

TEST_F(ReasoningTest, AThinkingTemplateSendsTheReplyToReasoningContent) {
  start_with(ServerConfig::ReasoningFormat::Auto, /*template_thinks=*/true);
  const auto r = post("/v1/chat/completions", body(false));
  ASSERT_EQ(r.status, 200) << r.body;
  const json msg = r.json()["choices"][0]["message"];
  const std::string text = fake_text(engine_->submitted()[0].prompt_tokens, 5);
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(msg["content"], "");
  EXPECT_EQ(msg["reasoning_content"], text);
  EXPECT_EQ(msg["reasoning"], text);

  const auto s = post("/v1/chat/completions", body(true));
  ASSERT_EQ(s.status, 200);
  std::string reasoning, content;
  for (const std::string& e : s.sse_data()) {
    if (e == "[DONE]") break;
    const json d = json::parse(e)["choices"][0]["delta"];
    if (d.contains("reasoning_content")) {
      reasoning += d["reasoning_content"].get<std::string>();
      EXPECT_EQ(d["reasoning"], d["reasoning_content"]);
    }
    if (d.contains("content")) content += d["content"].get<std::string>();
  }
  EXPECT_EQ(reasoning, text);
  EXPECT_EQ(content, "");
}

TEST_F(ReasoningTest, FormatNoneOrAPlainTemplateLeavesTheReplyAsContent) {
  for (auto [format, thinks] : {std::pair{ServerConfig::ReasoningFormat::None, true},
                                std::pair{ServerConfig::ReasoningFormat::Auto, false}}) {
    start_with(format, thinks);
    const auto r = post("/v1/chat/completions", body(false));
    ASSERT_EQ(r.status, 200) << r.body;
    const json msg = r.json()["choices"][0]["message"];
    EXPECT_EQ(msg["content"], fake_text(engine_->submitted()[0].prompt_tokens, 5));
    EXPECT_FALSE(msg.contains("reasoning_content"));
    TearDown();
  }
}

TEST_F(ReasoningTest, CompletionsAreNeverSplit) {
  start_with(ServerConfig::ReasoningFormat::Deepseek, true);
  const auto r = post("/v1/completions", {{"prompt", "x"}, {"max_tokens", 3}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_FALSE(r.json()["choices"][0].contains("reasoning_content"));
}

}  // namespace
}  // namespace kairo::server::testing
