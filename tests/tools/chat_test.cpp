// `kairo chat` as a person uses it, on a pseudo-terminal (keys typed, Ctrl-C included), and as a script uses it,
// with the conversation piped in.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <regex>

#include "pty_process.h"
#include "run_command.h"
#include "test_paths.h"

namespace kairo {
namespace {

using testing::PtyProcess;
using testing::run_kairo;

// The demo model writes stories, not chat: with the ChatML it gets by default (it has no chat template) it answers
// with blank lines. This template lets it continue the conversation as one text instead, so its replies are words.
const std::string& continuation_template() {
  static const std::string path = [] {
    // Per process: ctest runs each test in its own process, two at a time, and a file another one is rewriting
    // (truncated, then written) reads as an empty template.
    const std::string p = ::testing::TempDir() + "/chat_continuation." + std::to_string(::getpid()) + ".jinja";
    std::ofstream(p) << "{% for m in messages %}{{ m['content'] }}{% if not loop.last %} {% endif %}{% endfor %}";
    return p;
  }();
  return path;
}

// Greedy and one reply short: the demo model's replies are the same each run.
std::vector<std::string> demo_chat_args() {
  return {"chat",
          "--model",
          kairo::testing::demo_model_path(),
          "--chat-template-file",
          continuation_template(),
          "--temperature",
          "0",
          "--max-tokens",
          "8",
          "--threads",
          "1"};
}
std::string demo_chat_command(bool chatml = false) {
  return "chat --model " + kairo::testing::demo_model_path() +
         (chatml ? std::string() : " --chat-template-file " + continuation_template()) +
         " --temperature 0 --max-tokens 8 --threads 1";
}
const std::vector<std::string> kPlainTerminal = {"TERM=xterm", "NO_COLOR=1"};

// Waits for the next prompt. The line editor redraws the prompt with every key, so the prompt's text alone could be
// such a redraw; a new prompt comes right after bracketed paste is switched on for it.
bool next_prompt(PtyProcess& chat, std::string_view prompt = ">>> ") {
  return chat.wait_for("\x1b[?2004h\r" + std::string(prompt));
}

size_t count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + needle.size())) ++n;
  return n;
}

// What was printed after the line the user entered: from the line's end to the blank line before the next prompt.
std::string reply_in(const std::string& screen) {
  const size_t begin = screen.find("\r\n");
  const size_t end = screen.rfind("\r\n\r\n");
  if (begin == std::string::npos || end == std::string::npos || end < begin) return "<no reply in: " + screen + ">";
  return screen.substr(begin + 2, end - begin - 2);
}

// The replies of a piped conversation, one per line (the demo model's short replies have no newline of their own).
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  size_t begin = 0;
  for (size_t end = text.find('\n'); end != std::string::npos; end = text.find('\n', begin)) {
    lines.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return lines;
}

TEST(KairoChat, StreamsRepliesAndRunsCommandsOnATerminal) {
  const auto piped = run_kairo(demo_chat_command(), "printf 'Once upon a time\\n' | ");
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  ASSERT_EQ(piped.out, ", pixels unfolding like\n");
  const std::string expected_reply = ", pixels unfolding like";

  PtyProcess chat(demo_chat_args(), kPlainTerminal);
  ASSERT_TRUE(chat.started());
  ASSERT_TRUE(next_prompt(chat)) << chat.output();

  size_t mark = chat.mark();
  chat.type("Once upon a time\r");
  ASSERT_TRUE(next_prompt(chat)) << chat.output();
  EXPECT_EQ(reply_in(chat.since(mark)), expected_reply + "\r\n[stopped at --max-tokens 8]")
      << "the same reply as piped, on its own line, then why it stopped";

  chat.type("/system You are a storyteller.\r");
  ASSERT_TRUE(chat.wait_for("System prompt set: You are a storyteller.")) << chat.output();
  ASSERT_TRUE(next_prompt(chat));
  chat.type("/system\r");
  ASSERT_TRUE(chat.wait_for("System prompt: You are a storyteller.")) << chat.output();
  chat.type("/clear\r");
  ASSERT_TRUE(chat.wait_for("Cleared the conversation (the system prompt stays).")) << chat.output();
  chat.type("/help\r");
  ASSERT_TRUE(chat.wait_for("/system TEXT")) << chat.output();
  ASSERT_TRUE(next_prompt(chat));

  // A """ block: one message, one reply, whatever the number of lines.
  mark = chat.mark();
  chat.type("\"\"\"\r");
  ASSERT_TRUE(next_prompt(chat, "... ")) << chat.output();
  chat.type("The robot\r");
  ASSERT_TRUE(next_prompt(chat, "... ")) << chat.output();
  chat.type("dreamed\"\"\"\r");
  ASSERT_TRUE(next_prompt(chat)) << chat.output();
  EXPECT_EQ(count(chat.since(mark), "[stopped at --max-tokens 8]"), 1u) << chat.since(mark);

  // A trailing backslash continues the message.
  mark = chat.mark();
  chat.type("Once upon \\\r");
  ASSERT_TRUE(next_prompt(chat, "... ")) << chat.output();
  chat.type("a time\r");
  ASSERT_TRUE(next_prompt(chat)) << chat.output();
  EXPECT_EQ(count(chat.since(mark), "[stopped at --max-tokens 8]"), 1u) << chat.since(mark);

  chat.type("/exit\r");
  EXPECT_EQ(chat.wait_exit(), 0) << chat.output();
}

TEST(KairoChat, CtrlCAtThePromptClearsTheLineAndCtrlDQuits) {
  PtyProcess chat(demo_chat_args(), kPlainTerminal);
  ASSERT_TRUE(next_prompt(chat)) << chat.output();
  chat.type("half a thought");
  chat.type("\x03");
  ASSERT_TRUE(chat.wait_for("^C")) << chat.output();
  const size_t mark = chat.mark();
  ASSERT_TRUE(next_prompt(chat)) << chat.output();
  EXPECT_EQ(chat.since(mark).find("to quit"), std::string::npos) << "a line was cleared: no hint needed";
  chat.type("\x03");
  ASSERT_TRUE(chat.wait_for("(to quit, type /exit or press Ctrl-D)")) << chat.output();
  ASSERT_TRUE(next_prompt(chat));
  chat.type("\x04");
  EXPECT_EQ(chat.wait_exit(), 0) << chat.output();
}

TEST(KairoChat, ATerminalThatCannotEditGetsPlainLines) {
  PtyProcess chat(demo_chat_args(), {"TERM=dumb", "NO_COLOR"});
  ASSERT_TRUE(chat.wait_for(">>> ")) << chat.output();
  chat.type("Once upon a time\r");  // the terminal itself echoes and edits the line
  ASSERT_TRUE(chat.wait_for(", pixels unfolding like\r\n")) << chat.output();
  ASSERT_TRUE(chat.wait_for(">>> ")) << chat.output();
  chat.type("\x03");
  ASSERT_TRUE(chat.wait_for("(to quit, type /exit or press Ctrl-D)")) << chat.output();
  ASSERT_TRUE(chat.wait_for(">>> ")) << chat.output();
  chat.type("/exit\r");
  EXPECT_EQ(chat.wait_exit(), 0) << chat.output();
  EXPECT_EQ(chat.output().find('\x1b'), std::string::npos) << "no escape sequences on a dumb terminal";
}

TEST(KairoChat, ColoursOnlyWithoutNoColor) {
  PtyProcess coloured(demo_chat_args(), {"TERM=xterm", "NO_COLOR"});
  ASSERT_TRUE(next_prompt(coloured)) << coloured.output();
  EXPECT_NE(coloured.output().find("\x1b[2mkairo chat:"), std::string::npos) << "the banner is dimmed";
  coloured.type("/exit\r");
  EXPECT_EQ(coloured.wait_exit(), 0);

  PtyProcess plain(demo_chat_args(), kPlainTerminal);
  ASSERT_TRUE(next_prompt(plain)) << plain.output();
  plain.type("/system be kind\r");
  ASSERT_TRUE(next_prompt(plain));
  plain.type("/exit\r");
  EXPECT_EQ(plain.wait_exit(), 0);
  EXPECT_EQ(plain.output().find("\x1b[2m"), std::string::npos) << plain.output();
  EXPECT_EQ(plain.output().find("\x1b[0m"), std::string::npos) << plain.output();
}

// A random-weight model with a long context writes long replies (it stops only where it samples end-of-sequence,
// about one token in 512); the demo model's context of 128 tokens ends replies too soon to interrupt one.
const std::string& long_reply_model() {
  static const std::string path = [] {
    const std::string out = ::testing::TempDir() + "/chat_long_replies." + std::to_string(::getpid()) + ".gguf";
    const auto r = run_kairo(
        "synth --arch llama --dim 512 --layers 4 --heads 8 --ffn 1024 --vocab 512 --context 2048 "
        "--type F16 --tokenizer-from " +
        kairo::testing::demo_model_path() + " " + out);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return out;
  }();
  return path;
}

TEST(KairoChat, CtrlCStopsAReplyAndTheChatGoesOn) {
  PtyProcess chat({"chat", "--model", long_reply_model(), "--threads", "1", "--temperature", "1"}, kPlainTerminal);
  ASSERT_TRUE(next_prompt(chat)) << chat.output();
  // A reply may still end on its own before Ctrl-C reaches it (its end-of-sequence token came early): try again.
  bool interrupted = false;
  for (int attempt = 0; attempt < 5 && !interrupted; ++attempt) {
    chat.type("Tell me a long story\r");
    ASSERT_TRUE(chat.wait_for("\r\n")) << chat.output();  // the line is entered
    ASSERT_TRUE(chat.wait_for_more()) << "the reply streams: " << chat.output();
    const size_t mark = chat.mark();
    chat.type("\x03");
    ASSERT_TRUE(next_prompt(chat)) << chat.output();
    interrupted = chat.since(mark).find("[interrupted]") != std::string::npos;
    if (!interrupted) {  // the Ctrl-C came too late: wait until it has been dealt with at the prompt
      chat.type("/system\r");
      ASSERT_TRUE(chat.wait_for("No system prompt")) << chat.output();
      ASSERT_TRUE(next_prompt(chat)) << chat.output();
    }
  }
  EXPECT_TRUE(interrupted) << chat.output();
  // The program is still there and answers the next message.
  chat.type("Go on\r");
  ASSERT_TRUE(chat.wait_for("\r\n")) << chat.output();
  ASSERT_TRUE(chat.wait_for_more()) << chat.output();
  chat.type("\x03");
  ASSERT_TRUE(next_prompt(chat)) << chat.output();
  chat.type("/exit\r");
  EXPECT_EQ(chat.wait_exit(), 0) << chat.output();
}

struct Stats {
  int prompt = 0, cached = 0;
};

std::vector<Stats> stats_lines(const std::string& err) {
  static const std::regex re(R"(\[prompt: (\d+) tokens, (\d+) of them cached;)");
  std::vector<Stats> out;
  for (auto it = std::sregex_iterator(err.begin(), err.end(), re); it != std::sregex_iterator(); ++it) {
    out.push_back({std::stoi((*it)[1]), std::stoi((*it)[2])});
  }
  return out;
}

TEST(KairoChat, APipedConversationKeepsItsHistoryUntilClear) {
  // ChatML (the model has none): its fixed opening fills whole KV blocks, which the prefix cache can hand on.
  const auto r = run_kairo(demo_chat_command(/*chatml=*/true) + " --stats", "printf 'hi\\nhi\\n/clear\\nhi\\n' | ");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("the model has no chat template: using ChatML, as kairo serve does"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("Cleared the conversation."), std::string::npos) << "notices go to stderr: " << r.err;
  const std::vector<Stats> s = stats_lines(r.err);
  ASSERT_EQ(s.size(), 3u) << r.err;
  EXPECT_GT(s[1].prompt, s[0].prompt) << "the second prompt holds the first exchange";
  EXPECT_GE(s[1].cached, 32) << "and the KV of the first turn is reused";
  EXPECT_EQ(s[2].prompt, s[0].prompt) << "after /clear the prompt is the first one again";
  EXPECT_GE(s[2].cached, 32);
}

TEST(KairoChat, APipedConversationPrintsOneReplyPerMessage) {
  const auto r = run_kairo(demo_chat_command(), "printf 'Once upon a time\\n\\nI dream\\n' | ");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> replies = lines_of(r.out);
  ASSERT_EQ(replies.size(), 2u) << "blank lines are no messages: " << r.out;
  EXPECT_EQ(replies[0], ", pixels unfolding like");
  EXPECT_EQ(r.err, "[stopped at --max-tokens 8]\n[stopped at --max-tokens 8]\n");
}

TEST(KairoChat, APipedMultiLineMessageAndTheSystemPrompt) {
  const auto r = run_kairo(demo_chat_command() + " --stats --system 'Be brief.'",
                           "printf '\"\"\"\\nline one\\nline two\\n\"\"\"\\n/system\\n' | ");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(lines_of(r.out).size(), 1u) << r.out;
  EXPECT_NE(r.err.find("System prompt: Be brief."), std::string::npos) << r.err;
  EXPECT_EQ(stats_lines(r.err).size(), 1u) << r.err;
}

TEST(KairoChat, AMessageTooLongForTheContextFailsThePipedRun) {
  const std::string long_line(400, 'a');
  const auto r = run_kairo(demo_chat_command(), "printf '" + long_line + "\\nhi\\n' | ");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("error: the message does not fit: it and 8 tokens for the reply need more than the context of "
                       "128 tokens; shorten it"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(lines_of(r.out).size(), 1u) << "the next message is still answered: " << r.out;
}

TEST(KairoChat, ShowsOrHidesAThinkingModelsReasoning) {
  // A template whose generation prompt opens a think block, as DeepSeek-R1's does: the demo model never closes it, so
  // its whole reply is reasoning.
  const std::string tmpl = ::testing::TempDir() + "/chat_thinking." + std::to_string(::getpid()) + ".jinja";
  std::ofstream(tmpl) << "{% for m in messages %}{% set content = m['content'] %}"
                         "{% if '</think>' in content %}{% set content = content.split('</think>')[-1] %}{% endif %}"
                         "{{ m['role'] }}: {{ content }}\n{% endfor %}"
                         "{% if add_generation_prompt %}assistant: <think>\n{% endif %}";
  const auto shown =
      run_kairo(demo_chat_command(/*chatml=*/true) + " --chat-template-file " + tmpl, "printf 'hi\\n' | ");
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_EQ(shown.out.rfind("Thinking...\n", 0), 0u) << shown.out;
  const auto hidden = run_kairo(demo_chat_command(/*chatml=*/true) + " --thinking hide --chat-template-file " + tmpl,
                                "printf 'hi\\n' | ");
  ASSERT_EQ(hidden.exit_code, 0) << hidden.err;
  EXPECT_EQ(hidden.out, "\n") << "no answer after the reasoning: an empty reply";
}

TEST(KairoChat, UnknownCommandsSaySo) {
  const auto r = run_kairo(demo_chat_command(), "printf '/sytem hi\\n/exit\\nnever read\\n' | ");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("error: unknown command /sytem (/help lists the commands"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "") << "/exit ends the chat before the last line";
}

}  // namespace
}  // namespace kairo
