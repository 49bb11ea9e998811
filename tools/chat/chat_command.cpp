#include "chat/chat_command.h"

namespace kairo::tools::chat {
namespace {

std::string_view trim(std::string_view s) {
  const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!s.empty() && blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && blank(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace

std::optional<Command> parse_command(std::string_view text) {
  if (text.empty() || text.front() != '/') return std::nullopt;
  size_t name_end = 1;
  while (name_end < text.size() && text[name_end] != ' ' && text[name_end] != '\t' && text[name_end] != '\n') {
    ++name_end;
  }
  const std::string_view name = text.substr(0, name_end);
  const std::string_view argument = trim(text.substr(name_end));
  if (name == "/help" || name == "/?") return Command{CommandKind::Help, {}};
  if (name == "/exit" || name == "/quit" || name == "/bye") return Command{CommandKind::Exit, {}};
  if (name == "/clear") return Command{CommandKind::Clear, {}};
  if (name == "/system") {
    if (argument.empty()) return Command{CommandKind::ShowSystem, {}};
    if (argument == "none") return Command{CommandKind::RemoveSystem, {}};
    return Command{CommandKind::SetSystem, std::string(argument)};
  }
  return Command{CommandKind::Unknown, std::string(name)};
}

std::string_view command_help() {
  return "Commands:\n"
         "  /system TEXT   set the system prompt (the conversation so far is kept)\n"
         "  /system        show the system prompt\n"
         "  /system none   remove the system prompt\n"
         "  /clear         forget the conversation (the system prompt stays)\n"
         "  /exit          quit (also /quit, /bye, or Ctrl-D on an empty line)\n"
         "  /help          this text\n"
         "\n"
         "Several lines: end a line with \\ to continue on the next, or put the text between lines that start and\n"
         "end with \"\"\" (a \"\"\" block is always sent as a message, even one starting with /). Pasted lines make\n"
         "one message.\n"
         "Ctrl-C stops a reply (what was written so far stays in the conversation); at the prompt it clears the\n"
         "line.\n";
}

}  // namespace kairo::tools::chat
