// The conversation as chat-template messages.
#include "chat/conversation.h"

#include <gtest/gtest.h>

namespace kairo::tools::chat {
namespace {

using nlohmann::ordered_json;

ordered_json msg(const char* role, const char* content) { return {{"role", role}, {"content", content}}; }

TEST(Conversation, SystemPromptFirstThenTheTurns) {
  Conversation c;
  c.add_user("hi");
  c.add_assistant("hello");
  c.set_system("be brief");
  EXPECT_EQ(c.messages(),
            ordered_json::array({msg("system", "be brief"), msg("user", "hi"), msg("assistant", "hello")}));
  c.set_system("");
  EXPECT_EQ(c.messages(), ordered_json::array({msg("user", "hi"), msg("assistant", "hello")}));
}

TEST(Conversation, ClearKeepsTheSystemPrompt) {
  Conversation c;
  c.set_system("be brief");
  c.add_user("hi");
  c.add_assistant("hello");
  c.clear();
  EXPECT_EQ(c.messages(), ordered_json::array({msg("system", "be brief")}));
}

TEST(Conversation, ForgetsTheOldestExchangeButNeverTheLastMessage) {
  Conversation c;
  c.add_user("one");
  c.add_assistant("1");
  c.add_user("two");
  c.add_assistant("2");
  c.add_user("three");
  EXPECT_TRUE(c.forget_oldest_exchange());
  EXPECT_EQ(c.messages(), ordered_json::array({msg("user", "two"), msg("assistant", "2"), msg("user", "three")}));
  EXPECT_TRUE(c.forget_oldest_exchange());
  EXPECT_FALSE(c.forget_oldest_exchange());
  EXPECT_EQ(c.messages(), ordered_json::array({msg("user", "three")}));
}

}  // namespace
}  // namespace kairo::tools::chat
