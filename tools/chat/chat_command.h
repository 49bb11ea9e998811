#pragma once
// The chat's slash commands: a message that starts with '/' (and did not come from a """ block) is one.
#include <optional>
#include <string>
#include <string_view>

namespace kairo::tools::chat {

enum class CommandKind {
  Help,          // /help, /?
  Exit,          // /exit, /quit, /bye
  Clear,         // /clear: forget the conversation, keep the system prompt
  ShowSystem,    // /system
  SetSystem,     // /system TEXT
  RemoveSystem,  // /system none
  Unknown,
};

struct Command {
  CommandKind kind = CommandKind::Unknown;
  std::string argument;  // SetSystem: the prompt; Unknown: the command as typed
};

// std::nullopt when `text` is a message, not a command.
std::optional<Command> parse_command(std::string_view text);

// What /help prints.
std::string_view command_help();

}  // namespace kairo::tools::chat
