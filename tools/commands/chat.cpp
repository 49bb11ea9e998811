// `kairo chat --model M`: an interactive chat in the terminal, like `ollama run`. The model runs in-process on the
// serving engine (one sequence; the prefix cache keeps the conversation's KV from turn to turn, so each reply only
// computes the new messages), and each turn renders the whole conversation through the model's chat template as
// `kairo serve` does. Input from a pipe is a scripted conversation: one message per line, the replies on stdout.
// The pieces are in tools/chat/.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>

#include "chat/chat_session.h"
#include "chat/interrupt.h"
#include "chat/line_editor.h"
#include "server/chat_template_loader.h"
#include "chat/plain_line_reader.h"
#include "chat/terminal.h"
#include "command_registry.h"
#include "core/format.h"
#include "device_option.h"
#include "sampling_options.h"
#include "engine/engine.h"
#include "server/server_context.h"
#include "tokenizer/tokenizer.h"

namespace kairo::tools {
namespace {

struct ChatArgs {
  std::string model = "models/aidreams260K.gguf";
  std::string system;
  std::string chat_template_file;
  int max_tokens = 0;
  int max_model_len = 0;
  SamplingFlags sampling;
  int threads = 0;
  std::string thinking = "show";
  bool stats = false;
  std::string device = "cpu";
};

int run_chat(const ChatArgs& a) {
  auto fail = [](const std::string& msg) {
    std::fprintf(stderr, "error: %s\n", msg.c_str());
    return 1;
  };
  auto model = load_model_on(a.model, a.device);
  if (!model.ok()) return fail(model.error().message);
  auto tok = tokenizer::Tokenizer::from_gguf((*model)->file());
  if (!tok.ok()) return fail(tok.error().message);
  auto chat_template = server::load_chat_template((*model)->file(), **tok, a.chat_template_file);
  if (!chat_template.ok()) return fail(chat_template.error().message);

  engine::EngineConfig config;
  config.scheduler.max_num_seqs = 1;
  config.max_model_len = a.max_model_len;
  config.n_threads = a.threads;
  std::unique_ptr<engine::Engine> engine;
  {
    const chat::SigintBlocked engine_threads_ignore_sigint;
    auto created = engine::Engine::create(**model, **tok, config);
    if (!created.ok()) return fail("cannot start the engine: " + created.error().message);
    engine = std::move(*created);
  }
  server::Backend backend;
  backend.engine = engine.get();
  backend.tokenizer = tok->get();
  backend.chat_template = chat_template->render;
  backend.template_traits = chat_template->traits;

  const bool interactive = chat::is_terminal(STDIN_FILENO) && chat::is_terminal(STDOUT_FILENO);
  if (chat::is_terminal(STDIN_FILENO)) chat::catch_interrupts();
  chat::ChatOutput output;
  output.interactive = interactive;
  output.terminal = chat::is_terminal(STDOUT_FILENO);
  output.colour = chat::colour_wanted(STDOUT_FILENO);
  output.notices = interactive ? stdout : stderr;
  output.notice_colour = chat::colour_wanted(fileno(output.notices));
  chat::ChatSettings settings;
  apply_sampling_flags(a.sampling, settings.sampling);
  settings.max_tokens = a.max_tokens;
  settings.context_tokens = engine->context_length();
  settings.thinking = a.thinking == "hide" ? chat::ThinkingDisplay::Hide : chat::ThinkingDisplay::Show;
  settings.stats = a.stats;

  std::unique_ptr<chat::TerminalModes> modes;
  std::unique_ptr<chat::LineSource> input;
  if (chat::can_edit_lines(STDIN_FILENO, STDOUT_FILENO)) {
    modes = std::make_unique<chat::TerminalModes>(STDIN_FILENO);
    input = std::make_unique<chat::LineEditor>(STDIN_FILENO, STDOUT_FILENO, *modes);
  } else {
    input = std::make_unique<chat::PlainLineReader>(STDIN_FILENO, STDOUT_FILENO, /*show_prompt=*/interactive);
  }
  chat::ChatSession session(*engine, backend, settings, output, modes.get());
  session.conversation().set_system(a.system);

  const char* dim = output.notice_colour ? "\x1b[2m" : "";
  const char* reset = output.notice_colour ? "\x1b[0m" : "";
  if (chat_template->render == nullptr) {
    std::fprintf(output.notices,
                 "%sthe model has no chat template: using ChatML, as kairo serve does (--chat-template-file gives "
                 "it one)%s\n",
                 dim, reset);
  }
  if (interactive) {
    std::printf("%skairo chat: %s, context %d tokens. /help for help, /exit or Ctrl-D to quit.%s\n", dim,
                std::filesystem::path(a.model).stem().c_str(), settings.context_tokens, reset);
    if (!a.system.empty()) std::printf("%sSystem prompt: %s%s\n", dim, a.system.c_str(), reset);
  }
  return session.run(*input);
}

void setup_chat(CLI::App& app) {
  auto a = std::make_shared<ChatArgs>();
  CLI::App* cmd =
      app.add_subcommand("chat", "Chat with a model in the terminal (reads one message per line from a pipe)");
  add_device_option(cmd, a->device);
  cmd->add_option("--model,-m", a->model, "GGUF model file")->capture_default_str();
  cmd->add_option("--system", a->system, "System prompt (/system changes it during the chat)");
  cmd->add_option("--chat-template-file", a->chat_template_file,
                  "Jinja chat template to use instead of the model's (a model without one gets ChatML)");
  cmd->add_option("--max-tokens,-n", a->max_tokens, "Tokens per reply at most (0 = until the model stops or the "
                  "context is full)")->capture_default_str()->check(CLI::Range(0, 1 << 24));
  cmd->add_option("--max-model-len", a->max_model_len,
                  "Context the conversation may use, in tokens (0 = the model's); the KV cache is sized for it")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  add_sampling_flags(cmd, a->sampling, "Random seed of every reply (-1 = random)");
  cmd->add_option("--threads", a->threads, "Threads (0 = all available cores)")->capture_default_str()
      ->check(CLI::Range(0, 1024));
  cmd->add_option("--thinking", a->thinking,
                  "A thinking model's reasoning: show (dimmed, between Thinking... and ...done thinking.) or hide")
      ->capture_default_str()->check(CLI::IsMember({"show", "hide"}));
  cmd->add_flag("--stats", a->stats, "After each reply, print its token counts and speed to stderr");
  cmd->callback([a] { set_exit_code(run_chat(*a)); });
}

}  // namespace

KAIRO_REGISTER_COMMAND(chat, setup_chat);

}  // namespace kairo::tools
