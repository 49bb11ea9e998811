#include "chat/chat_session.h"

#include <algorithm>

#include "chat/chat_prompt.h"
#include "chat/interrupt.h"
#include "chat/message_assembler.h"
#include "chat/reply_stream.h"
#include "chat/terminal.h"
#include "core/format.h"
#include "server/server_context.h"

namespace kairo::tools::chat {
namespace {

constexpr std::string_view kPrompt = ">>> ";
constexpr std::string_view kContinuationPrompt = "... ";
constexpr std::string_view kDim = "\x1b[2m";
constexpr std::string_view kReset = "\x1b[0m";

bool blank(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; });
}

}  // namespace

ChatSession::ChatSession(engine::EngineClient& engine, const server::Backend& backend, ChatSettings settings,
                         ChatOutput output, TerminalModes* modes)
    : engine_(engine), backend_(backend), settings_(settings), out_(output), modes_(modes) {}

void ChatSession::notice(std::string_view text) {
  std::string line;
  if (out_.notice_colour) line += kDim;
  line += text;
  if (out_.notice_colour) line += kReset;
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), out_.notices);
  std::fflush(out_.notices);
}

void ChatSession::error(std::string_view text) {
  std::fflush(out_.replies);
  std::fprintf(stderr, "error: %.*s\n", static_cast<int>(text.size()), text.data());
}

ChatSession::Next ChatSession::run_command(const Command& command) {
  switch (command.kind) {
    case CommandKind::Help: {
      const std::string_view help = command_help();
      std::fwrite(help.data(), 1, help.size(), out_.notices);
      std::fflush(out_.notices);
      return Next::Continue;
    }
    case CommandKind::Exit: return Next::Exit;
    case CommandKind::Clear:
      conversation_.clear();
      notice(conversation_.system().empty() ? "Cleared the conversation."
                                            : "Cleared the conversation (the system prompt stays).");
      return Next::Continue;
    case CommandKind::ShowSystem:
      notice(conversation_.system().empty() ? "No system prompt (set one with /system TEXT)."
                                            : "System prompt: " + conversation_.system());
      return Next::Continue;
    case CommandKind::SetSystem:
      conversation_.set_system(command.argument);
      notice("System prompt set: " + conversation_.system());
      return Next::Continue;
    case CommandKind::RemoveSystem:
      conversation_.set_system({});
      notice("System prompt removed.");
      return Next::Continue;
    case CommandKind::Unknown:
      error("unknown command " + command.argument +
            " (/help lists the commands; to send a message that starts with /, put it in a \"\"\" block)");
      return Next::Continue;
  }
  return Next::Continue;
}

void ChatSession::reply_to(std::string message) {
  conversation_.add_user(std::move(message));
  const int room = reply_room(settings_.context_tokens, settings_.max_tokens);
  auto prompt = fit_prompt(conversation_, backend_, settings_.context_tokens, room);
  if (!prompt.ok()) {
    conversation_.drop_last_turn();
    error(prompt.error().message);
    any_failed_ = true;
    return;
  }
  if (prompt->n_forgotten > 0) {
    notice(strprintf("[the conversation outgrew the context of %d tokens: forgot the oldest %d exchange%s]",
                     settings_.context_tokens, prompt->n_forgotten, prompt->n_forgotten == 1 ? "" : "s"));
  }
  engine::Request request;
  request.prompt_tokens = std::move(prompt->tokens);
  request.sampling = settings_.sampling;
  const int left = settings_.context_tokens - static_cast<int>(request.prompt_tokens.size());
  request.stop.max_tokens = settings_.max_tokens > 0 ? std::min(settings_.max_tokens, left) : left;

  ReplyPrinter printer(out_.replies, ReplyStyle{out_.colour, out_.terminal, settings_.thinking},
                       backend_.template_traits.thinks, prompt->opens_thinking);
  if (modes_) modes_->streaming();
  take_interrupt();  // a Ctrl-C typed before this reply started is not meant for it
  const ReplyEnd end = stream_reply(
      engine_, std::move(request), [&](std::string_view text) { printer.push(text); },
      [] { return take_interrupt(); });
  printer.finish();

  if (!end.error.empty() && !end.stopped) {
    if (!printer.at_line_start()) std::fputc('\n', out_.replies);
    conversation_.drop_last_turn();
    error(end.error);
    any_failed_ = true;
    engine_failed_ = engine_.failure_state().kind != engine::FailureKind::None;
    return;
  }
  conversation_.add_assistant(printer.answer());
  // Each reply ends its line; piped, even an empty one, so that a script reading replies line by line stays in step.
  if (!printer.at_line_start() || (!out_.interactive && !printer.wrote_anything())) std::fputc('\n', out_.replies);
  std::fflush(out_.replies);
  report_end(end);
  if (out_.interactive) std::fputc('\n', out_.replies);
  std::fflush(out_.replies);
}

void ChatSession::report_end(const ReplyEnd& end) {
  if (end.stopped) {
    notice("[interrupted]");
  } else if (end.reason == engine::FinishReason::Length) {
    if (settings_.max_tokens > 0 && end.n_generated_tokens >= settings_.max_tokens) {
      notice(strprintf("[stopped at --max-tokens %d]", settings_.max_tokens));
    } else {
      notice(strprintf("[stopped: the conversation fills the context of %d tokens]", settings_.context_tokens));
    }
  }
  if (settings_.stats) {
    const double decode_seconds = std::max(end.seconds - end.first_token_seconds, 1e-9);
    std::fprintf(stderr,
                 "[prompt: %d tokens, %d of them cached; reply: %d tokens, the first after %.3f s, %.1f tokens/s]\n",
                 end.n_prompt_tokens, end.n_cached_prompt_tokens, end.n_generated_tokens, end.first_token_seconds,
                 end.n_generated_tokens > 1 ? (end.n_generated_tokens - 1) / decode_seconds : 0.0);
  }
}

int ChatSession::run(LineSource& input) {
  MessageAssembler assembler;
  for (;;) {
    std::fflush(out_.replies);
    const InputLine line = input.read(assembler.in_progress() ? kContinuationPrompt : kPrompt);
    if (line.status == InputLine::Status::EndOfInput) {
      if (assembler.in_progress()) notice("[the unfinished message was not sent]");
      break;
    }
    if (line.status == InputLine::Status::Interrupted) {
      if (!assembler.in_progress() && line.text.empty()) notice("(to quit, type /exit or press Ctrl-D)");
      assembler.reset();
      continue;
    }
    input.remember(line.text);
    std::optional<Message> message = assembler.add(line.text, line.continues);
    if (!message) continue;
    if (!message->literal) {
      if (std::optional<Command> command = parse_command(message->text)) {
        if (run_command(*command) == Next::Exit) break;
        continue;
      }
    }
    if (blank(message->text)) continue;
    reply_to(std::move(message->text));
    if (engine_failed_) return 1;
  }
  if (modes_) modes_->restore();
  return out_.interactive || !any_failed_ ? 0 : 1;
}

}  // namespace kairo::tools::chat
