#pragma once
// The chat loop: read a message (or a command), render the whole conversation through the chat template, stream the
// reply, keep it. What the user sees:
//   - on a terminal: prompts (">>> ", "... " inside a multi-line message), notices dimmed, a blank line after each
//     reply; Ctrl-C stops a reply and keeps its text so far in the conversation (as a chat UI's "stop" button does:
//     what the user saw is what the model said), marked "[interrupted]".
//   - otherwise (input from a pipe or file): one user message per line (multi-line forms work too), each reply
//     printed with a newline after it on stdout, and notices and errors on stderr; the exit status is 1 when a
//     message could not be answered.
#include <cstdio>
#include <string>
#include <string_view>

#include "chat/chat_command.h"
#include "chat/conversation.h"
#include "chat/line_source.h"
#include "chat/reply_printer.h"
#include "chat/reply_stream.h"
#include "engine/engine_client.h"
#include "engine/request.h"

namespace kairo::server {
struct Backend;
}

namespace kairo::tools::chat {

class TerminalModes;

struct ChatSettings {
  engine::SamplingParams sampling;
  int max_tokens = 0;  // per reply; 0: until the model ends it or the context is full
  int context_tokens = 0;  // the engine's context (max_model_len)
  ThinkingDisplay thinking = ThinkingDisplay::Show;
  bool stats = false;  // after each reply, its token counts and speed on stderr
};

struct ChatOutput {
  std::FILE* replies = stdout;
  std::FILE* notices = stderr;  // stdout on a terminal, so that they interleave with the replies in order
  bool interactive = false;     // a person at a terminal
  bool colour = false;          // in the replies (a thinking model's reasoning is dimmed)
  bool notice_colour = false;   // in the notices
  bool terminal = false;        // replies go to a terminal: print them terminal_safe
};

class ChatSession {
 public:
  // `modes` switches the terminal to streaming mode for replies (so Ctrl-C raises SIGINT); null without a terminal.
  ChatSession(engine::EngineClient& engine, const server::Backend& backend, ChatSettings settings, ChatOutput output,
              TerminalModes* modes);
  Conversation& conversation() { return conversation_; }
  // Until /exit or the end of the input; returns the exit status.
  int run(LineSource& input);

 private:
  enum class Next { Continue, Exit };
  Next run_command(const Command& command);
  void reply_to(std::string message);
  void report_end(const ReplyEnd& end);  // why a reply stopped, when it is news; --stats
  void notice(std::string_view text);
  void error(std::string_view text);

  engine::EngineClient& engine_;
  const server::Backend& backend_;
  ChatSettings settings_;
  ChatOutput out_;
  TerminalModes* modes_;
  Conversation conversation_;
  bool any_failed_ = false;   // a message went unanswered
  bool engine_failed_ = false;  // the engine cannot run requests any more: the chat ends
};

}  // namespace kairo::tools::chat
