// The slash commands.
#include "chat/chat_command.h"

#include <gtest/gtest.h>

namespace kairo::tools::chat {
namespace {

TEST(ChatCommand, MessagesAreNotCommands) {
  EXPECT_FALSE(parse_command("hello"));
  EXPECT_FALSE(parse_command(" /exit"));
  EXPECT_FALSE(parse_command(""));
}

TEST(ChatCommand, Commands) {
  EXPECT_EQ(parse_command("/help")->kind, CommandKind::Help);
  EXPECT_EQ(parse_command("/?")->kind, CommandKind::Help);
  EXPECT_EQ(parse_command("/exit")->kind, CommandKind::Exit);
  EXPECT_EQ(parse_command("/bye")->kind, CommandKind::Exit);
  EXPECT_EQ(parse_command("/clear")->kind, CommandKind::Clear);
  EXPECT_EQ(parse_command("/system")->kind, CommandKind::ShowSystem);
  EXPECT_EQ(parse_command("/system   ")->kind, CommandKind::ShowSystem);
  EXPECT_EQ(parse_command("/system none")->kind, CommandKind::RemoveSystem);
}

TEST(ChatCommand, SystemTakesTheRestOfTheMessage) {
  const auto c = parse_command("/system  You are terse.\nAnswer in French. ");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->kind, CommandKind::SetSystem);
  EXPECT_EQ(c->argument, "You are terse.\nAnswer in French.");
}

TEST(ChatCommand, UnknownCommandsAreNamed) {
  const auto c = parse_command("/sytem be nice");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->kind, CommandKind::Unknown);
  EXPECT_EQ(c->argument, "/sytem");
}

}  // namespace
}  // namespace kairo::tools::chat
