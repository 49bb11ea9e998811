// The conversation as prompt tokens: rendered as the server renders a chat request, trimmed to fit the context.
#include "chat/chat_prompt.h"

#include <gtest/gtest.h>

#include "gguf/gguf_file.h"
#include "server/server_context.h"
#include "test_paths.h"
#include "tokenizer/tokenizer.h"

namespace kairo::tools::chat {
namespace {

const tokenizer::Tokenizer& demo_tokenizer() {
  static const std::unique_ptr<tokenizer::Tokenizer> tk = [] {
    auto file = gguf::File::open(kairo::testing::demo_model_path());
    EXPECT_TRUE(file.ok());
    auto t = tokenizer::Tokenizer::from_gguf(*file);
    EXPECT_TRUE(t.ok());
    return std::move(*t);
  }();
  return *tk;
}

server::Backend chatml_backend() {
  server::Backend b;
  b.tokenizer = &demo_tokenizer();
  return b;  // no template: ChatML, as `kairo serve` falls back to
}

Conversation three_turns() {
  Conversation c;
  c.set_system("S");
  c.add_user("one");
  c.add_assistant("1");
  c.add_user("two");
  return c;
}

TEST(ChatPrompt, RendersTheWholeConversationWithChatML) {
  Conversation c = three_turns();
  auto p = fit_prompt(c, chatml_backend(), 100000, 100);
  ASSERT_TRUE(p.ok()) << p.error().message;
  const std::string text =
      "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\none<|im_end|>\n<|im_start|>assistant\n1<|im_end|>\n"
      "<|im_start|>user\ntwo<|im_end|>\n<|im_start|>assistant\n";
  const tokenizer::Tokenizer& tk = demo_tokenizer();
  EXPECT_EQ(p->tokens, tk.encode(text, tk.add_bos_by_default(), /*parse_special=*/true));
  EXPECT_EQ(p->n_forgotten, 0);
  EXPECT_FALSE(p->opens_thinking);
  EXPECT_EQ(c.n_turns(), 3u);
}

TEST(ChatPrompt, ForgetsTheOldestExchangesToLeaveRoomForTheReply) {
  Conversation last_only;
  last_only.set_system("S");
  last_only.add_user("two");
  auto alone = fit_prompt(last_only, chatml_backend(), 100000, 100);
  ASSERT_TRUE(alone.ok());
  Conversation full = three_turns();
  auto whole = fit_prompt(full, chatml_backend(), 100000, 100);
  ASSERT_TRUE(whole.ok());
  // A context with room for the last message and the reply, not for the whole conversation.
  const int reply = 10;
  const int context = static_cast<int>(alone->tokens.size()) + reply;
  ASSERT_GT(whole->tokens.size(), alone->tokens.size());
  Conversation c = three_turns();
  auto p = fit_prompt(c, chatml_backend(), context, reply);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->n_forgotten, 1);
  EXPECT_EQ(p->tokens, alone->tokens);
  EXPECT_EQ(c.n_turns(), 1u);  // the conversation itself forgot them
  EXPECT_EQ(c.system(), "S");
}

TEST(ChatPrompt, AMessageTooLongForTheContextIsRefusedAndChangesNothing) {
  Conversation c = three_turns();
  auto p = fit_prompt(c, chatml_backend(), 30, 10);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().message,
            "the message does not fit: the system prompt, the message and 10 tokens for the reply need more than the "
            "context of 30 tokens; shorten them (/system changes the system prompt)");
  EXPECT_EQ(c.n_turns(), 3u);
}

TEST(ChatPrompt, TheTemplatesRefusalIsTheError) {
  server::Backend b = chatml_backend();
  b.chat_template = [](const server::ChatTemplateInput&) -> Result<std::string> {
    return Error{"System role not supported"};
  };
  Conversation c = three_turns();
  auto p = fit_prompt(c, b, 100000, 100);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().message, "the model's chat template rejected the conversation: System role not supported");
}

TEST(ChatPrompt, ATemplateThatOpensThinkingSaysSo) {
  server::Backend b = chatml_backend();
  b.chat_template = [](const server::ChatTemplateInput&) -> Result<std::string> {
    return std::string("user: hi\nassistant: <think>\n");
  };
  Conversation c;
  c.add_user("hi");
  auto p = fit_prompt(c, b, 100000, 100);
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->opens_thinking);
}

TEST(ChatPrompt, ReplyRoomIsAQuarterOfTheContextAtMost) {
  EXPECT_EQ(reply_room(128, 0), 32);
  EXPECT_EQ(reply_room(128, 8), 8);
  EXPECT_EQ(reply_room(131072, 0), 2048);
  EXPECT_EQ(reply_room(2, 0), 1);
}

}  // namespace
}  // namespace kairo::tools::chat
